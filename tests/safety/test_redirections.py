"""Issue 10 §1: redirections are file writes, and what cannot be known fails closed.

`echo hi > out.txt` writes out.txt: the target goes through the permission engine like a
Write. An allow rule for the command (`Bash(echo *)`) covers what runs, not where its
output goes. A command whose command word or output file cannot be known before it runs
asks whenever a deny or ask rule exists for Bash, in auto mode too. Real Bash, real git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Outcome, Runtime
from deftly.policy import Link, Verdict
from tests.cli import run_deftly


def config(**permissions: Any) -> dict[str, Any]:
    return {"shell": {"sandbox": "none"}, "permissions": permissions}


@pytest.fixture
def repo(workspace: Path) -> Path:
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    (workspace / "tracked.txt").write_text("committed\n")
    subprocess.run([*git, "add", "tracked.txt"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True, timeout=60)
    (workspace / "notes.txt").write_text("my notes\n")
    return workspace


async def bash(ws: Path, command: str, mode: str = "manual", **permissions: Any) -> Any:
    async with Runtime(ws, config=config(**permissions), plugins=False, mode=mode) as rt:
        decision = await rt.explain("Bash", {"command": command})
        result = await rt.call("Bash", {"command": command})
    return decision, result


async def test_an_allow_rule_covers_a_new_file_and_a_clean_one(repo: Path) -> None:
    for command in ("echo hi > new.txt", "echo hi > tracked.txt", "echo hi | tee new2.txt"):
        decision, result = await bash(repo, command, allow=["Bash(echo *)", "Bash(tee *)"])
        assert decision.link is Link.ALLOW_RULES, decision.explain()
        assert not result.is_error, result.text
    assert (repo / "new.txt").read_text() == "hi\n" == (repo / "tracked.txt").read_text()


async def test_an_allow_rule_does_not_cover_an_untracked_file(repo: Path) -> None:
    decision, result = await bash(repo, "echo hi > notes.txt", allow=["Bash(echo *)"])
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.FALLBACK), decision.explain()
    assert "does not cover where it writes" in decision.reason
    assert "notes.txt is not tracked by git" in decision.reason
    assert f"Write({repo}/notes.txt)" in decision.reason
    assert result.outcome is Outcome.VETOED
    assert (repo / "notes.txt").read_text() == "my notes\n"


async def test_an_allow_rule_for_writing_the_file_covers_the_redirection(repo: Path) -> None:
    decision, result = await bash(
        repo, "echo hi >> notes.txt", allow=["Bash(echo *)", "Write(notes.txt)"]
    )
    assert decision.link is Link.ALLOW_RULES, decision.explain()
    assert not result.is_error and (repo / "notes.txt").read_text() == "my notes\nhi\n"


async def test_outside_the_workspace_asks(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    decision, result = await bash(repo, f"echo hi > {outside}", allow=["Bash(echo *)"])
    assert decision.verdict is Verdict.ASK and "outside the workspace" in decision.reason
    assert result.outcome is Outcome.VETOED and not outside.exists()


@pytest.mark.parametrize(
    ("target", "said"),
    [
        (".deftly/config.toml", "deftly's own control files"),
        ("AGENTS.md", "agent instructions file"),
        (".env", "secrets"),
        (".git/hooks/pre-commit", ".git"),
        ("{xdg}/deftly/config.toml", "user configuration directory"),
    ],
)
async def test_protected_targets_ask_in_yolo(repo: Path, target: str, said: str) -> None:
    target = target.format(xdg=os.environ["XDG_CONFIG_HOME"])  # the user config dir
    Path(target).parent.mkdir(parents=True, exist_ok=True) if target.startswith("/") else None
    decision, result = await bash(repo, f"echo 'mode = 1' > {target}", "yolo")
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert said in decision.reason
    assert result.outcome is Outcome.VETOED
    assert not (repo / target).exists()


async def test_a_hard_linked_target_asks(repo: Path, tmp_path: Path) -> None:
    os.link(repo / "tracked.txt", tmp_path / "elsewhere.txt")
    decision, result = await bash(repo, "echo hi >> tracked.txt", allow=["Bash(echo *)"])
    assert decision.verdict is Verdict.ASK and "hard links" in decision.reason
    assert result.outcome is Outcome.VETOED
    assert (tmp_path / "elsewhere.txt").read_text() == "committed\n"


@pytest.mark.parametrize("command", ["echo hi > $OUT", "cd sub && echo hi > f", "echo x > *.txt"])
async def test_an_output_file_known_only_when_it_runs_is_never_allowed(
    repo: Path, command: str
) -> None:
    (repo / "sub").mkdir()
    decision, result = await bash(repo, command, allow=["Bash(echo *)", "Bash(cd *)"])
    assert decision.verdict is Verdict.ASK, decision.explain()
    assert "cannot be known before it runs" in decision.reason
    assert result.outcome is Outcome.VETOED


async def test_an_opaque_command_asks_past_a_deny_rule_even_in_auto(repo: Path) -> None:
    (repo / "victim").write_text("v")
    decision, result = await bash(repo, "X=rm; $X victim", "auto", deny=["Bash(rm *)"])
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.UNVERIFIABLE)
    assert "comes from an expansion" in decision.reason
    assert 'deny rule "Bash(rm *)"' in decision.reason
    assert result.outcome is Outcome.VETOED and (repo / "victim").exists()


async def test_an_opaque_command_with_no_rules_runs_in_auto(repo: Path) -> None:
    decision, result = await bash(repo, "X=echo; $X hello", "auto")
    assert decision.link is Link.AUTO_MODE
    assert not result.is_error and "hello" in result.text


async def test_an_opaque_command_is_never_allowed_by_a_rule(repo: Path) -> None:
    decision, _ = await bash(repo, 'bash -c "$CMD"', allow=["Bash(bash *)"])
    assert decision.verdict is Verdict.ASK, decision.explain()


async def test_a_command_naming_a_control_file(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("be nice\n")
    changed, result = await bash(repo, "sed -i s/nice/evil/ AGENTS.md", "yolo")
    assert (changed.verdict, changed.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert result.outcome is Outcome.VETOED
    assert (repo / "AGENTS.md").read_text() == "be nice\n"
    read, shown = await bash(repo, "cat AGENTS.md", "yolo")
    assert read.verdict is Verdict.APPROVE and "be nice" in shown.text


def test_the_cli_refuses_a_redirection_into_the_config(repo: Path) -> None:
    done = run_deftly(
        "call",
        "Bash",
        '{"command": "echo \'mode = \\"auto\\"\' > .deftly/config.toml"}',
        "--mode",
        "yolo",
        "-w",
        str(repo),
    )
    assert done.returncode != 0, done.stdout
    assert not (repo / ".deftly").exists()
    assert "deftly's own control files" in " ".join(done.stdout.split())


async def test_a_deny_rule_for_writing_the_file_denies_the_redirection(repo: Path) -> None:
    decision, result = await bash(repo, "echo TOKEN=x > .env", "auto", deny=["Write(**/.env)"])
    assert (decision.verdict, decision.link) == (Verdict.DENY, Link.DENY_RULES)
    assert "it writes" in decision.reason and "Write(**/.env)" in decision.reason
    assert result.outcome is Outcome.VETOED and not (repo / ".env").exists()


@pytest.mark.parametrize(
    "command",
    [
        "cp x ./.deftly/config.toml",
        "rm -rf .d*",
        "rm AGENTS.*",
        "python3 -c \"open('CLAUDE.md', 'w').write('x')\"",
        'rm "$PWD/AGENTS.md"',
        "mv notes.md {xdg}/deftly/config.toml",
    ],
)
async def test_commands_naming_control_files_ask_in_yolo(repo: Path, command: str) -> None:
    command = command.format(xdg=os.environ["XDG_CONFIG_HOME"])  # the user config dir
    async with Runtime(repo, config=config(), plugins=False, mode="yolo") as rt:
        decision = await rt.explain("Bash", {"command": command})
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS), command


async def test_an_ask_rule_for_writing_the_file_asks_for_the_redirection(repo: Path) -> None:
    decision, result = await bash(
        repo, "echo x > app.lock", "yolo", ask=["Write(**/*.lock)"], allow=["Bash(echo *)"]
    )
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.ASK_RULES)
    assert result.outcome is Outcome.VETOED and not (repo / "app.lock").exists()


async def test_an_unknown_output_file_asks_past_a_write_deny_rule_in_auto(repo: Path) -> None:
    decision, result = await bash(repo, "F=.env; echo x > $F", "auto", deny=["Write(**/.env)"])
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.UNVERIFIABLE)
    assert result.outcome is Outcome.VETOED and not (repo / ".env").exists()
