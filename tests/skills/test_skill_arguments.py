"""Skill arguments keep their quoting from the command line to `$name`: the CLI quotes each
argument for the skill's tokenizer instead of joining them with bare spaces."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deftly.features.skills import join_arguments, tokenize
from tests.conftest import subprocess_env
from tests.skills.conftest import write_skill

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _render(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        [DEFTLY, "skills", "render", "fix-lint", *args, "-w", str(workspace)],
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200"),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def lint_workspace(workspace: Path) -> Path:
    write_skill(
        workspace / ".deftly" / "skills",
        "fix-lint",
        "name: fix-lint\ndescription: Fix lint.\narguments: [target, rule]",
        body="target=<$target> rule=<$rule>",
    )
    return workspace


def test_a_quoted_path_with_a_space_stays_one_argument(lint_workspace: Path) -> None:
    text = _render(lint_workspace, "src/a b.py")
    assert "target=<src/a b.py>" in text
    assert "rule=<>" in text


@pytest.mark.parametrize(
    ("argv", "target", "rule"),
    [
        (["src/a b.py", "E501"], "src/a b.py", "E501"),
        (["it's here.py", 'say "hi"'], "it's here.py", 'say "hi"'),
        (["", "second"], "", "second"),
    ],
)
def test_each_argument_arrives_whole(
    lint_workspace: Path, argv: list[str], target: str, rule: str
) -> None:
    text = _render(lint_workspace, *argv)
    assert f"target=<{target}> rule=<{rule}>" in text


def test_join_is_the_inverse_of_the_skill_tokenizer() -> None:
    values = ["src/a b.py", "it's", "both ' and \"", "", "plain"]
    assert tokenize(join_arguments(values)) == values
