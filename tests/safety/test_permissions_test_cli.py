"""`deftly permissions --test`: the decision and every link of the chain, from the real
binary, and nothing is run or written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_deftly


def deftly(*args: str) -> subprocess.CompletedProcess[str]:
    return run_deftly(*args)


@pytest.fixture
def ws(workspace: Path) -> Path:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    # deny and ask rules apply whether or not the workspace is trusted
    config.write_text(
        '[permissions]\ndeny = ["Bash(rm -rf *)", "Bash(rm *)"]\nask = ["Write(secrets/**)"]\n'
    )
    (workspace / "v").write_text("keep me")
    return workspace


def test_a_denied_command_is_shown_with_its_rule_and_nothing_runs(ws: Path) -> None:
    result = deftly("permissions", "-w", str(ws), "--test", "echo v | xargs rm")
    assert result.returncode == 3, result.stdout + result.stderr
    out = result.stdout
    assert "Permission decision for Bash: DENY" in out
    assert 'deny rule "Bash(rm' in out and "config.toml:2" in out
    assert "deny-rules" in out and "nothing was run" in out
    assert (ws / "v").read_text() == "keep me"


@pytest.mark.parametrize(
    ("subject", "code", "verdict"),
    [
        ("rm -rf /abs/path", 3, "deny"),
        ("/bin/rm v", 3, "deny"),
        ("coproc rm v", 3, "deny"),
        ("git status", 0, "approve"),  # a harmless command (issue 11)
        ("git push", 1, "ask"),
        ("Write(secrets/a.txt)", 1, "ask"),
        ("Read(README.md)", 0, "approve"),
        ('Read({"path": "README.md", "n_lines": 2})', 0, "approve"),
    ],
)
def test_exit_status_says_the_verdict(ws: Path, subject: str, code: int, verdict: str) -> None:
    (ws / "README.md").write_text("hi\n")
    result = deftly("permissions", "-w", str(ws), "--test", subject, "--json")
    assert result.returncode == code, result.stdout + result.stderr
    [data] = json.loads(result.stdout)
    assert data["verdict"] == verdict and data["subject"] == subject
    assert data["steps"] and data["steps"][-1]["link"] == data["link"]


def test_json_lists_every_link_asked(ws: Path) -> None:
    result = deftly("permissions", "-w", str(ws), "--test", "Write(new.txt)", "--json")
    [data] = json.loads(result.stdout)
    assert data["tool"] == "Write" and data["arguments"]["path"] == "new.txt"
    links = [step["link"] for step in data["steps"]]
    assert links[0] == "deny-rules" and links[-1] == data["link"]
    assert all(step["detail"] for step in data["steps"])
    assert not (ws / "new.txt").exists()  # only resolved, never written


def test_several_subjects_exit_with_the_strictest(ws: Path) -> None:
    result = deftly(
        "permissions", "-w", str(ws), "--test", "Read(v)", "--test", "rm v", "--test", "ls"
    )
    assert result.returncode == 3
    assert result.stdout.count("Permission decision for") == 3


def test_a_redirection_is_not_performed(ws: Path) -> None:
    result = deftly("permissions", "-w", str(ws), "--mode", "auto", "--test", "echo hi > out.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (ws / "out.txt").exists()


def test_an_opaque_command_says_why(ws: Path) -> None:
    result = deftly("permissions", "-w", str(ws), "--test", "X=rm; $X v", "--json")
    [data] = json.loads(result.stdout)
    assert data["verdict"] != "approve"
    assert "comes from an expansion" in json.dumps(data)
    assert (ws / "v").exists()


def test_a_subject_that_is_not_a_call_is_a_usage_error(ws: Path) -> None:
    result = deftly("permissions", "-w", str(ws), "--test", 'Read({"nope": 1})')
    assert result.returncode == 2
    assert "cannot test" in result.stderr and "'path' is required" in result.stderr


def test_a_path_refused_before_the_chain_is_a_deny(ws: Path) -> None:
    (ws / ".env").write_text("TOKEN=x")
    result = deftly("permissions", "-w", str(ws), "--test", "Read(.env)", "--json")
    assert result.returncode == 3
    [data] = json.loads(result.stdout)
    assert data["link"] == "resolve" and "refused before the permission chain" in data["reason"]
    assert "TOKEN" not in result.stdout


def test_a_failing_rule_example_stops_the_command(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[permissions]\ndeny = [{ rule = "Bash(rm -rf *)", not_match = ["rm -rf x"] }]\n'
    )
    result = deftly("permissions", "-w", str(workspace), "--test", "ls")
    assert result.returncode != 0
    assert "should not apply to 'rm -rf x', but it does" in result.stderr
    assert f"{config}:2" in result.stderr


def test_a_rule_that_can_match_nothing_is_warned_about(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\ndeny = ["Bash( rm *)", "Bassh(rm *)"]\n')
    result = deftly("permissions", "-w", str(workspace), "--test", "rm v")
    assert "has spaces at the start or end of its pattern" in result.stderr
    assert 'names the tool "Bassh"' in result.stderr and 'Did you mean "Bash"?' in result.stderr
    assert result.returncode == 1  # neither rule applies, so manual mode asks


def test_edit_is_probed_with_distinct_strings_and_nothing_changes(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    result = deftly("permissions", "-w", str(ws), "--test", "Edit(src/a.py)", "--json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    [data] = json.loads(result.stdout)
    args = data["arguments"]
    assert data["tool"] == "Edit" and args["path"] == "src/a.py"
    assert args["old_string"] != args["new_string"]
    assert (ws / "src" / "a.py").read_text() == "x = 1\n"


def test_the_rule_listing_shows_examples_and_warnings(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        "[permissions]\n"
        'deny = [{ rule = "Bash(rm -rf *)", match = ["rm -rf /abs"] }, "Bash(npm:* x)"]\n'
    )
    result = deftly("permissions", "-w", str(workspace), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    [examples] = [r for r in data["rules"] if r["rule"] == "Bash(rm -rf *)"]
    assert examples["match"] == ["rm -rf /abs"] and examples["origin"].endswith(":2")
    assert any('":*" before the end' in w for w in data["warnings"])
