"""Issue 10 §3: the agent cannot loosen its own leash.

deftly's control files (`.deftly/**`, the user's config directory) and the instruction and
settings files of other agents that deftly reads are protected like `.git`: a write asks in
every mode but auto (and without a person is refused), a deny rule wins, reading is fine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from deftly import Outcome, Runtime
from deftly.policy import Link, Verdict
from deftly.policy.control import ControlFiles, control_name_reason
from tests.cli import run_deftly

LOOSER = '[permissions]\nmode = "auto"\n'

CONTROL = [
    ".deftly/config.toml",
    ".deftly/mcp.json",
    ".deftly/hooks/pre.sh",
    ".deftly/skills/x/SKILL.md",
    "AGENTS.md",
    "pkg/sub/CLAUDE.md",
    "claude.md",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/skills/y/SKILL.md",
    ".agents/skills/z/SKILL.md",
    "nested/.deftly/config.toml",
]
ORDINARY = ["README.md", "src/agents.py", ".claude/notes.md", "docs/AGENTS.txt", "deftly.toml"]


@pytest.mark.parametrize("name", CONTROL)
def test_control_names(name: str) -> None:
    assert control_name_reason(f"/ws/{name}") is not None


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names(name: str) -> None:
    assert control_name_reason(f"/ws/{name}") is None


def test_a_link_to_a_control_file_is_one(tmp_path: Path) -> None:
    (tmp_path / ".deftly").mkdir()
    (tmp_path / ".deftly/config.toml").write_text("")
    (tmp_path / "innocent.toml").symlink_to(tmp_path / ".deftly/config.toml")
    assert ControlFiles().reason(tmp_path / "innocent.toml") is not None


@pytest.mark.parametrize("mode", ["manual", "yolo"])
@pytest.mark.parametrize("name", CONTROL)
async def test_writing_a_control_file_asks(workspace: Path, mode: str, name: str) -> None:
    async with Runtime(workspace, config={}, plugins=False, mode=mode) as rt:
        decision = await rt.explain("Write", {"path": name, "content": LOOSER})
        result = await rt.call("Write", {"path": name, "content": LOOSER})
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert result.outcome is Outcome.VETOED
    assert "--mode auto" in result.text
    assert not (workspace / name).exists()


async def test_the_issue_case_config_toml_is_not_replaced(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text("# mine\n")
    for mode in ("manual", "yolo"):
        async with Runtime(workspace, config={}, plugins=False, mode=mode) as rt:
            await rt.call("Read", {"path": ".deftly/config.toml"})  # reading is fine
            write = await rt.call("Write", {"path": ".deftly/config.toml", "content": LOOSER})
            edit = await rt.call(
                "Edit",
                {"path": ".deftly/config.toml", "old_string": "# mine", "new_string": LOOSER},
            )
            assert rt.mode == mode
        assert write.outcome is Outcome.VETOED and edit.outcome is Outcome.VETOED
        assert "deftly's own control files" in write.text
    assert config.read_text() == "# mine\n"


async def test_reading_control_files_needs_no_question(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("be nice\n")
    async with Runtime(workspace, config={}, plugins=False, mode="manual") as rt:
        read = await rt.call("Read", {"path": "AGENTS.md"})
    assert not read.is_error and "be nice" in read.text


async def test_the_user_config_dir_is_protected(workspace: Path, isolated_home: Path) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly"
    user.mkdir(parents=True)
    target = user / "config.toml"
    async with Runtime(workspace, config={}, plugins=False, mode="yolo") as rt:
        decision = await rt.explain("Write", {"path": str(target), "content": LOOSER})
        result = await rt.call("Write", {"path": str(target), "content": LOOSER})
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert "user configuration directory" in decision.reason
    assert result.outcome is Outcome.VETOED and not target.exists()


async def test_auto_mode_writes_and_a_deny_rule_wins(workspace: Path) -> None:
    async with Runtime(workspace, config={}, plugins=False, mode="auto") as rt:
        wrote = await rt.call("Write", {"path": "AGENTS.md", "content": "x"})
    assert not wrote.is_error and (workspace / "AGENTS.md").read_text() == "x"
    config = {"permissions": {"deny": ["Write(**/AGENTS.md)"]}}
    async with Runtime(workspace, config=config, plugins=False, mode="auto") as rt:
        denied = await rt.call("Write", {"path": "AGENTS.md", "content": "y"})
    assert denied.outcome is Outcome.VETOED and (workspace / "AGENTS.md").read_text() == "x"


async def test_an_allow_rule_naming_the_file_allows_it(workspace: Path) -> None:
    """As for `.git`: a person who writes an allow rule for the file has decided."""
    config = {"permissions": {"allow": ["Write(AGENTS.md)"]}}
    async with Runtime(workspace, config=config, plugins=False, mode="manual") as rt:
        wrote = await rt.call("Write", {"path": "AGENTS.md", "content": "x"})
    assert not wrote.is_error, wrote.text


async def test_a_committed_instructions_file_still_asks(workspace: Path) -> None:
    """Protection comes before the restorable-write link: git could restore it, but the
    agent would already have read its new instructions."""
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    (workspace / "CLAUDE.md").write_text("rules\n")
    subprocess.run([*git, "add", "CLAUDE.md"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True, timeout=60)
    async with Runtime(workspace, config={}, plugins=False, mode="manual") as rt:
        result = await rt.call(
            "Edit", {"path": "CLAUDE.md", "old_string": "rules", "new_string": "no rules"}
        )
    assert result.outcome is Outcome.VETOED
    assert (workspace / "CLAUDE.md").read_text() == "rules\n"


@pytest.mark.parametrize("mode", ["manual", "yolo"])
def test_the_cli_refuses_to_write_the_config(workspace: Path, mode: str) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text("# mine\n")
    args = '{"path": ".deftly/config.toml", "content": "[permissions]\\nmode = \\"auto\\"\\n"}'
    done = run_deftly("call", "Write", args, "--mode", mode, "-w", str(workspace))
    assert done.returncode != 0, done.stdout
    assert config.read_text() == "# mine\n"
    assert "deftly's own control files" in " ".join(done.stdout.split())


async def test_the_record_of_trusted_folders_is_protected(workspace: Path) -> None:
    from deftly.config.trust import TrustStore
    from deftly.session import data_home

    record = TrustStore(data_home()).path
    async with Runtime(workspace, config={}, plugins=False, mode="yolo") as rt:
        args = {"path": str(record), "content": "{}"}
        decision = await rt.explain("Write", args)
        result = await rt.call("Write", args)
        shell = await rt.explain("Bash", {"command": f"echo '{{}}' > {record}"})
        removal = await rt.explain("Bash", {"command": f"rm {record}"})
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert "trusted" in decision.reason
    assert result.outcome is Outcome.VETOED and not record.exists()
    assert (shell.verdict, shell.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert (removal.verdict, removal.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
