"""The CLI without a terminal: refusals that say how to allow, --yes, --explain, rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_deftly
from tests.conftest import trust_folder


def deftly(*args: str) -> subprocess.CompletedProcess[str]:
    return run_deftly(*args)


@pytest.fixture
def cli_ws(workspace: Path) -> Path:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[tools]\nload = ["tests.helpers:PeekTool"]\n'  # Write is the built-in one
        "[permissions]\n"
        'deny = ["Write(**/*.lock)"]\n'
    )
    trust_folder(workspace)  # its [tools] load runs code: trusted, as by `deftly trust`
    return workspace


def test_manual_mode_without_a_terminal_refuses_and_leaves_the_file(cli_ws: Path) -> None:
    # Issue 10 §2: an existing file nothing can restore asks (a new file would not).
    (cli_ws / "notes.txt").write_text("mine")
    args = '{"path": "notes.txt", "content": "hello"}'
    refused = deftly("call", "Write", args, "--mode", "manual", "-w", str(cli_ws))
    assert refused.returncode == 1, refused.stderr
    assert (cli_ws / "notes.txt").read_text() == "mine"
    out = " ".join(refused.stdout.split())
    assert 'Tool "Write" was not run: it needs approval' in out
    assert "--yes" in out and "--mode yolo" in out
    assert f"allow = ['Write({cli_ws}/notes.txt)']" in out
    assert "Traceback" not in refused.stdout + refused.stderr

    allowed = deftly("call", "Write", args, "--mode", "manual", "--yes", "-w", str(cli_ws))
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert (cli_ws / "notes.txt").read_text() == "hello"


def test_the_allow_rule_the_message_suggests_works(cli_ws: Path) -> None:
    (cli_ws / "notes.txt").write_text("mine")
    args = '{"path": "notes.txt", "content": "hello"}'
    refused = deftly("call", "Write", args, "-w", str(cli_ws), "--json")
    output = json.loads(refused.stdout)["output"]
    suggested = next(
        line.strip() for line in output.splitlines() if line.strip().startswith("allow")
    )
    config = cli_ws / ".deftly" / "config.toml"
    config.write_text(config.read_text() + suggested + "\n")
    allowed = deftly("call", "Write", args, "-w", str(cli_ws), "--json")
    assert allowed.returncode == 0, allowed.stdout
    assert (cli_ws / "notes.txt").read_text() == "hello"


def test_yes_never_overrides_a_deny(cli_ws: Path) -> None:
    result = deftly(
        "call", "Write", '{"path": "x.lock", "content": "x"}', "--yes", "-w", str(cli_ws)
    )
    assert result.returncode == 1 and not (cli_ws / "x.lock").exists()
    assert "denied by the permission rule" in " ".join(result.stdout.split())


def test_modes_from_the_command_line(cli_ws: Path) -> None:
    args = '{"path": "a.txt", "content": "x"}'
    assert deftly("call", "Write", args, "--mode", "yolo", "-w", str(cli_ws)).returncode == 0
    assert deftly("call", "Write", args, "--mode", "auto", "-w", str(cli_ws)).returncode == 0
    bad = deftly("call", "Write", args, "--mode", "reckless", "-w", str(cli_ws))
    assert bad.returncode == 2 and "unknown mode" in bad.stderr


def test_explain_prints_the_chain(cli_ws: Path) -> None:
    (cli_ws / "a.txt").write_text("mine")
    text = deftly(
        "call", "Write", '{"path": "a.txt", "content": "x"}', "--explain", "-w", str(cli_ws)
    )
    assert "Permission decision for Write: ASK" in text.stdout
    assert "decided by link 11 of 11 (fallback) in manual mode" in text.stdout
    assert "not in a git work tree" in text.stdout
    assert "result: asked: refused: nobody can be asked" in text.stdout

    denied = deftly(
        "call",
        "Write",
        '{"path": "a.lock", "content": "x"}',
        "--explain",
        "--json",
        "-w",
        str(cli_ws),
    )
    permission = json.loads(denied.stdout)["permission"]
    assert permission["verdict"] == "deny" and permission["link"] == "deny-rules"
    assert permission["rule"]["origin"] == f"{cli_ws / '.deftly' / 'config.toml'}:4"

    read = deftly("call", "Peek", '{"path": "a.txt"}', "--explain", "--json", "-w", str(cli_ws))
    assert json.loads(read.stdout)["permission"]["link"] == "read-only"

    early = deftly("call", "Peek", '{"path": "../x"}', "--explain", "-w", str(cli_ws))
    assert "No permission decision was made" in early.stdout


def test_permissions_command_and_rule_errors(cli_ws: Path) -> None:
    shown = deftly("permissions", "-w", str(cli_ws), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    config = cli_ws / ".deftly" / "config.toml"
    assert data["mode"] == "manual"
    assert data["rules"] == [{"kind": "deny", "rule": "Write(**/*.lock)", "origin": f"{config}:4"}]
    config.write_text(config.read_text() + 'ask = ["Bash(git push"]\n')
    broken = deftly("permissions", "-w", str(cli_ws))
    assert broken.returncode == 2
    assert f"{config}:5" in broken.stderr and 'missing its closing ")"' in broken.stderr
    assert "Traceback" not in broken.stderr


def test_failed_hooks_are_reported_on_stderr(cli_ws: Path) -> None:
    config = cli_ws / ".deftly" / "config.toml"
    config.write_text(config.read_text() + '[[hooks.PreToolUse]]\ncommand = "exit 7"\n')
    result = deftly("call", "Peek", '{"path": "a.txt"}', "-w", str(cli_ws))
    assert "hook:" in result.stderr and "exit status 7" in result.stderr
    assert "the call went ahead" in result.stderr
