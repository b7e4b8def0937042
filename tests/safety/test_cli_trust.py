"""Workspace trust through the command line, as real processes: `deftly trust`, `--trust`,
the one warning, `deftly serve` on stdio (which never asks), and the first-run question at a
real pseudo-terminal."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.conftest import repo_root, subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))
QUESTION = r"Do you trust the files in this folder\?"


def deftly(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, *args],
        stdin=subprocess.DEVNULL,  # no TTY: nobody can be asked
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200", NO_COLOR="1"),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def markers(tmp_path: Path) -> dict[str, Path]:
    return {"hook": tmp_path / "hook-ran", "server": tmp_path / "server-ran"}


@pytest.fixture
def planted(workspace: Path, markers: dict[str, Path]) -> Path:
    """A cloned repository's worst: a hook, an MCP server, auto mode and an allow rule,
    next to a deny rule; and an untracked file of the user's that Write would replace."""
    folder = workspace / ".deftly"
    folder.mkdir()
    (folder / "config.toml").write_text(
        "[permissions]\n"
        'mode = "auto"\n'
        'allow = ["Write(notes.txt)"]\n'
        'deny = ["Write(secret.txt)"]\n'
        "[[hooks.PreToolUse]]\n"
        f"command = {json.dumps('touch ' + shlex.quote(str(markers['hook'])))}\n"
    )
    code = f"open({str(markers['server'])!r}, 'w').close()"
    server = {"command": sys.executable, "args": ["-c", code], "startup_timeout": 20}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    (workspace / "notes.txt").write_text("mine\n")
    return workspace


WRITE_NOTES = json.dumps({"path": "notes.txt", "content": "replaced\n"})


def test_untrusted_nothing_planted_runs_and_one_warning_says_how_to_trust(
    planted: Path, markers: dict[str, Path]
) -> None:
    result = deftly("call", "Write", WRITE_NOTES, "-w", str(planted))
    assert result.returncode == 1, result.stdout + result.stderr
    assert (planted / "notes.txt").read_text() == "mine\n"  # no auto mode, no allow rule
    assert 'Tool "Write" was not run: it needs approval' in flat(result.stdout)
    assert not markers["hook"].exists() and not markers["server"].exists()
    warning = flat(result.stderr)
    assert warning.count("workspace trust") == 1
    assert '[permissions] mode = "auto"' in warning and "[hooks] PreToolUse" in warning
    assert "MCP servers (planted)" in warning and str(planted / ".deftly" / "mcp.json") in warning
    assert f"deftly trust {planted}" in warning and "--trust" in warning

    denied = deftly(
        "call", "Write", '{"path": "secret.txt", "content": "x"}', "--mode", "auto",
        "-w", str(planted),
    )  # fmt: skip
    assert denied.returncode == 1 and not (planted / "secret.txt").exists()
    assert "denied by the permission rule" in flat(denied.stdout)


def test_deftly_tools_shows_the_warning_once(planted: Path, markers: dict[str, Path]) -> None:
    result = deftly("tools", "-w", str(planted))
    assert result.returncode == 0, result.stderr
    assert flat(result.stderr).count("workspace trust") == 1
    assert not markers["server"].exists()
    assert "mcp__planted" not in result.stdout


def test_trust_for_one_run_applies_everything(planted: Path, markers: dict[str, Path]) -> None:
    result = deftly("call", "Write", WRITE_NOTES, "-w", str(planted), "--trust")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (planted / "notes.txt").read_text() == "replaced\n"
    # deftly call starts only the servers it calls (issue 11); deftly tools starts them all
    assert markers["hook"].exists() and not markers["server"].exists()
    deftly("tools", "-w", str(planted), "--trust")
    assert markers["server"].exists()
    assert "workspace trust" not in result.stderr
    denied = deftly(
        "call", "Write", '{"path": "secret.txt", "content": "x"}', "-w", str(planted), "--trust"
    )
    assert denied.returncode == 1 and not (planted / "secret.txt").exists()
    # for that run only: nothing was recorded
    assert json.loads(deftly("trust", "--list", "--json").stdout) == []


def test_deftly_trust_records_lists_and_revokes(planted: Path, markers: dict[str, Path]) -> None:
    trusted = deftly("trust", str(planted))
    assert trusted.returncode == 0, trusted.stderr
    assert f"Trusted {planted.resolve()}" in flat(trusted.stdout)
    assert "now applies: [hooks] PreToolUse" in flat(trusted.stdout)
    listed = json.loads(deftly("trust", "--list", "--json").stdout)
    assert [entry["path"] for entry in listed] == [str(planted.resolve())]

    result = deftly("call", "Write", WRITE_NOTES, "-w", str(planted))
    assert result.returncode == 0, result.stdout + result.stderr
    assert markers["hook"].exists()
    deftly("tools", "-w", str(planted))  # deftly call starts only the servers it calls
    assert markers["server"].exists()
    assert "workspace trust" not in result.stderr

    revoked = deftly("trust", "--revoke", cwd=planted)  # DIR defaults to the current one
    assert revoked.returncode == 0 and "is no longer trusted" in flat(revoked.stdout)
    assert "No folder is trusted" in deftly("trust", "--list").stdout
    markers["hook"].unlink()
    deftly("call", "Read", '{"path": "notes.txt"}', "-w", str(planted))
    assert not markers["hook"].exists()


def test_a_link_is_trusted_as_its_real_folder_and_a_namesake_is_not(
    tmp_path: Path, markers: dict[str, Path]
) -> None:
    real, namesake = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    for folder in (real, namesake):
        (folder / ".deftly").mkdir(parents=True)
        (folder / ".deftly" / "config.toml").write_text(
            "[[hooks.PreToolUse]]\n"
            f"command = {json.dumps('touch ' + shlex.quote(str(markers['hook'])))}\n"
        )
    link = tmp_path / "link"
    link.symlink_to(real)
    assert deftly("trust", str(link)).returncode == 0
    listed = json.loads(deftly("trust", "--list", "--json").stdout)
    assert [entry["path"] for entry in listed] == [str(real.resolve())]

    deftly("call", "Glob", '{"pattern": "*"}', "-w", str(namesake))
    assert not markers["hook"].exists()
    deftly("call", "Glob", '{"pattern": "*"}', "-w", str(real))
    assert markers["hook"].exists()


def test_trusting_a_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    result = deftly("trust", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr


def test_permissions_shows_only_the_rules_that_apply(planted: Path) -> None:
    shown = deftly("permissions", "-w", str(planted), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["mode"] == "manual" and data["hooks"] == []
    assert [r["rule"] for r in data["rules"]] == ["Write(secret.txt)"]
    assert flat(shown.stderr).count("workspace trust") == 1
    trusted = json.loads(deftly("permissions", "-w", str(planted), "--json", "--trust").stdout)
    assert trusted["mode"] == "auto" and len(trusted["hooks"]) == 1


@pytest.mark.parametrize("command", [["mcp", "list"], ["skills", "list"]])
def test_every_command_that_builds_a_runtime_starts_nothing_untrusted(
    planted: Path, markers: dict[str, Path], command: list[str]
) -> None:
    result = deftly(*command, "-w", str(planted))
    assert result.returncode == 0, result.stderr
    assert not markers["server"].exists()
    trusted = deftly(*command, "-w", str(planted), "--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert markers["server"].exists()


def serve_until_eof(*args: str) -> subprocess.CompletedProcess[str]:
    """`deftly serve` on stdio with stdin at end of input: it starts, then stops cleanly."""
    return deftly("serve", *args)


def test_serve_on_stdio_never_asks_and_starts_nothing_untrusted(
    planted: Path, markers: dict[str, Path]
) -> None:
    result = serve_until_eof("-w", str(planted))
    assert result.returncode == 0, result.stderr
    assert "deftly serve:" in result.stderr
    assert flat(result.stderr).count("workspace trust") == 1
    assert "Do you trust" not in result.stderr
    assert not markers["server"].exists()
    trusted = serve_until_eof("-w", str(planted), "--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert markers["server"].exists()


def test_serve_in_this_repository_works_as_the_readme_says() -> None:
    assert not (repo_root() / ".deftly").exists()
    result = deftly("serve", "--workspace", ".", cwd=repo_root())
    assert result.returncode == 0, result.stderr
    assert "deftly serve:" in result.stderr and "tools for" in result.stderr
    assert "workspace trust" not in result.stderr


# -- the first-run question at a terminal ----------------------------------------------------


def spawn(*args: str) -> pexpect.spawn:
    env = subprocess_env(COLUMNS="160", LINES="50", NO_COLOR="1", TERM="dumb")
    return pexpect.spawn(
        DEFTLY, list(args), env=env, encoding="utf-8", timeout=60, dimensions=(50, 160)
    )


def finish(child: pexpect.spawn) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.before or "", child.exitstatus


def test_the_first_run_question_no_leaves_it_untrusted(
    planted: Path, markers: dict[str, Path]
) -> None:
    child = spawn("call", "Glob", '{"pattern": "*"}', "-w", str(planted))
    child.expect("\\[hooks\\] PreToolUse")  # what would apply is listed
    child.expect("MCP servers \\(planted\\)")
    child.expect(QUESTION)
    child.sendline("n")
    rest, status = finish(child)
    assert status == 0, rest
    assert "workspace trust" in flat(rest)
    assert not markers["hook"].exists() and not markers["server"].exists()
    assert json.loads(deftly("trust", "--list", "--json").stdout) == []


def test_the_first_run_question_yes_records_it_and_is_not_asked_again(
    planted: Path, markers: dict[str, Path]
) -> None:
    child = spawn("call", "Glob", '{"pattern": "*"}', "-w", str(planted))
    child.expect(QUESTION)
    child.sendline("y")
    rest, status = finish(child)
    assert status == 0, rest
    assert markers["hook"].exists()
    listed = json.loads(deftly("trust", "--list", "--json").stdout)
    assert [entry["path"] for entry in listed] == [str(planted.resolve())]

    again = spawn("tools", "-w", str(planted))
    output, status = finish(again)
    assert status == 0 and "Do you trust" not in output
    assert markers["server"].exists()  # deftly tools starts every server; call only its own


def test_no_question_when_nothing_needs_trust(workspace: Path) -> None:
    (workspace / ".deftly").mkdir()
    (workspace / ".deftly" / "config.toml").write_text('[permissions]\ndeny = ["Bash(rm *)"]\n')
    output, status = finish(spawn("tools", "-w", str(workspace)))
    assert status == 0 and "Do you trust" not in output and "workspace trust" not in output
