"""Manual mode stops asking about what is harmless: the task tools on this session's own
tasks, and the configured read-only commands that touch only the workspace. Everything
else still asks (here: refused, since nobody can be asked)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly import Runtime
from deftly.config.loader import load_config
from deftly.config.permissions import HARMLESS_COMMANDS
from deftly.features.shell.harmless import harmless_problem
from deftly.features.shell.rules import CommandMatcher
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from tests.shell.conftest import task_id_in

ASKS = "needs approval"


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / "README.md").write_text("# readme\n")
    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / "a").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace


async def manual(make_runtime: Any, **config: Any) -> Runtime:
    runtime: Runtime = await make_runtime(
        mode="manual", approve_asks=False, config={"permissions": config}
    )
    return runtime


@pytest.mark.parametrize(
    "command",
    [
        "ls",
        "ls -la",
        "pwd",
        "git status",
        "cat README.md",
        "head -n 1 README.md",
        "git log --oneline -3 && wc -l README.md",
    ],
)
async def test_harmless_commands_run_unasked(make_runtime: Any, repo: Path, command: str) -> None:
    rt = await manual(make_runtime)
    result = await rt.call("Bash", {"command": command})
    assert ASKS not in result.text, result.text
    decision = await rt.explain("Bash", {"command": command})
    assert "harmless command" in decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",  # a secret
        "ls /etc",  # outside the workspace
        "cat a > b",  # a redirection
        "ls $(pwd)",  # an expansion
        "cat ../outside",
        "ls *",  # a glob
        "cat .git/config",
        "git show HEAD:.env",  # a secret through a revision
        "wc --files0-from=README.md",  # more names, from a file
        "cat .deftly/config.toml",  # a control file
        "rm a",  # not on the list
        "git commit -m x",
        "ls && rm a",
    ],
)
async def test_everything_else_still_asks(make_runtime: Any, repo: Path, command: str) -> None:
    rt = await manual(make_runtime)
    result = await rt.call("Bash", {"command": command})
    assert result.is_error and ASKS in result.text, result.text
    assert (repo / "a").exists()
    assert not (repo / "b").exists()


async def test_the_list_is_configurable(make_runtime: Any, repo: Path) -> None:
    none = await manual(make_runtime, harmless_commands=[])
    assert ASKS in (await none.call("Bash", {"command": "ls"})).text
    more = await manual(make_runtime, harmless_commands=["ls", "git rev-parse"])
    assert ASKS not in (await more.call("Bash", {"command": "git rev-parse --git-dir"})).text
    assert ASKS in (await more.call("Bash", {"command": "cat README.md"})).text


def test_an_untrusted_workspace_may_narrow_the_list_never_widen_it(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\nharmless_commands = ["ls", "rm"]\n')
    widened = load_config(workspace, trusted=False)
    assert "rm" not in widened.config.permissions.harmless_commands
    assert any("harmless_commands" in str(w) for w in widened.withheld)
    config.write_text('[permissions]\nharmless_commands = ["ls"]\n')
    narrowed = load_config(workspace, trusted=False)
    assert narrowed.config.permissions.harmless_commands == ["ls"]


async def test_the_task_tools_on_this_sessions_tasks_need_no_approval(
    make_runtime: Any, repo: Path
) -> None:
    rt = await manual(make_runtime)
    rt.approve_asks = True  # starting a command asks; following it must not
    started = await rt.call("Bash", {"command": "echo hi", "run_in_background": True})
    task_id = task_id_in(started.text)
    rt.approve_asks = False
    for name, arguments in [
        ("WaitFor", {"task_ids": [task_id], "timeout": 30}),
        ("TaskOutput", {"task_id": task_id}),
        ("TaskList", {"active_only": False}),
    ]:
        result = await rt.call(name, arguments)
        assert not result.is_error, (name, result.text)
        assert task_id in result.text
    stop = await rt.call("TaskStop", {"task_id": task_id})  # stopping is not harmless
    assert ASKS in stop.text


BAD_WORDS = [
    "../x",
    "/etc/passwd",
    ".env",
    ".git/config",
    "id_rsa",
    ".deftly/config.toml",
    "$(pwd)",
    "*",
    "a>b",
    "`id`",
    "~/x",
    "HEAD:.env",
]
GOOD_WORDS = ["README.md", "a", "src/b.py", "-l", "-n", "3", "--oneline"]
COMMANDS = ["ls", "cat", "head", "wc", "git log", "git diff", "rm", "sh -c"]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(COMMANDS),
            st.lists(st.sampled_from(BAD_WORDS + GOOD_WORDS), max_size=3),
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([" && ", " | ", "; "]),
)
def test_a_harmless_verdict_never_covers_a_bad_word_or_command(
    repo: Path, parts: list[tuple[str, list[str]]], joiner: str
) -> None:
    """Property: whatever the mix, a command judged harmless names no secret, control,
    .git or outside path, expands nothing, and runs only listed commands; and a mix of
    listed commands over plain workspace files is harmless."""
    command = joiner.join(" ".join([name, *words]) for name, words in parts)
    workspace = Workspace(repo)
    problem = harmless_problem(
        CommandMatcher(command), HARMLESS_COMMANDS, workspace, repo, ControlFiles.of([])
    )
    bad = any(w in BAD_WORDS for _, words in parts for w in words) or any(
        name in ("rm", "sh -c") for name, _ in parts
    )
    if bad:
        assert problem is not None, command
    else:  # only listed commands over workspace files: harmless
        assert problem is None, (command, problem)
