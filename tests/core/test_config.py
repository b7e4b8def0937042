"""Configuration files: locations, merge order, and errors that point at the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly import Runtime
from deftly.config import load_config, user_config_dir
from deftly.contract.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_files(workspace: Path) -> None:
    loaded = load_config(workspace)
    assert loaded.files == []
    assert loaded.config.output.max_chars == 50_000
    assert loaded.config.permissions.mode == "manual"


def test_project_overrides_user_and_rule_lists_concatenate(workspace: Path) -> None:
    user = write(
        user_config_dir() / "config.toml",
        '[permissions]\nmode = "yolo"\ndeny = ["Bash(rm *)"]\n[output]\nmax_chars = 2000\n',
    )
    project = write(
        workspace / ".deftly" / "config.toml",
        '[permissions]\nmode = "auto"\ndeny = ["Write(/etc/**)"]\n[tools]\ndisabled = ["Bash"]\n',
    )
    loaded = load_config(workspace)
    assert loaded.files == [user, project]
    config = loaded.config
    assert config.permissions.mode == "auto"
    assert config.permissions.deny == ["Bash(rm *)", "Write(/etc/**)"]
    assert config.output.max_chars == 2000
    assert config.tools.disabled == ["Bash"]
    assert loaded.origin("Write(/etc/**)") == f"{project}:3"
    assert loaded.origin("Bash(rm *)") == f"{user}:3"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[output\nmax_chars = 1", "is not valid TOML"),
        ("[output]\nmax_char = 10", "output.max_char: unknown setting (did you mean 'max_chars'?)"),
        (
            "[output]\nmax_chars = 10",
            "output.max_chars: Input should be greater than or equal to 1000",
        ),
        ('[permissions]\nmode = "reckless"', "permissions.mode"),
        ("[nonsense]\na = 1", "nonsense: unknown setting"),
    ],
)
def test_bad_config_names_the_file_and_the_setting(
    workspace: Path, text: str, fragment: str
) -> None:
    path = write(workspace / ".deftly" / "config.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_config(workspace)
    assert str(path) in str(caught.value)
    assert fragment in str(caught.value)


def test_runtime_uses_config_and_mode_argument(workspace: Path) -> None:
    write(workspace / ".deftly" / "config.toml", '[permissions]\nmode = "yolo"\n')
    assert Runtime(workspace, trust=True).mode == "yolo"  # a looser mode needs trust
    assert Runtime(workspace, mode="auto").mode == "auto"
    assert (
        Runtime(workspace, config={"output": {"max_chars": 5000}}).config.output.max_chars == 5000
    )


def test_runtime_refuses_a_missing_workspace(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory"):
        Runtime(tmp_path / "missing")
