"""Full-screen programs return at once with what to use instead; batch forms still run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


@pytest.mark.parametrize(
    ("command", "program", "instead"),
    [
        ("vi a.txt", "vi", "Edit or Write"),
        ("git log | less", "less", "--no-pager"),
        ("top", "top", "top -b -n 1"),
        ("sudo -n htop", "htop", "top -b -n 1"),
        ("timeout 5 vim a.txt", "vim", "Read"),
        ("bash -c 'nano a.txt'", "nano", "Edit or Write"),
        ("emacs a.txt", "emacs", "emacs --batch"),
        ("watch -n 1 ls", "watch", "run_in_background"),
        ("tmux attach", "tmux", "tmux new -d"),
        ("ssh example.invalid", "ssh", "ssh host 'cmd'"),
        ("crontab -e", "crontab", "crontab FILE"),
    ],
)
async def test_a_full_screen_program_is_refused_at_once(
    make_runtime: Any, workspace: Path, command: str, program: str, instead: str
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    rt: Runtime = await make_runtime(config={"shell": {"timeout": 30}})
    start = time.monotonic()
    result = await rt.call("Bash", {"command": command})
    assert time.monotonic() - start < 5  # not the timeout
    assert result.is_error
    assert f"{program} is " in result.text and "was not run" in result.text
    assert instead in result.text
    assert "\x1b" not in result.text


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("vim --version | head -n 1", "VIM"),
        ("top -b -n1 | head -n 1", "top"),
        ("git --no-pager log -1 --format=%s 2>&1 || true", ""),
        ("less --version | head -n 1", "less"),
        ("echo vi less top", "vi less top"),
        ("man ls | head -n 3", "LS"),
    ],
)
async def test_batch_forms_of_those_programs_still_run(
    make_runtime: Any, command: str, expected: str
) -> None:
    rt: Runtime = await make_runtime()
    result = await rt.call("Bash", {"command": command})
    assert "was not run" not in result.text
    assert not result.is_error, result.text
    assert expected in result.text


def test_emacs_batch_and_less_f_are_decided_from_their_arguments() -> None:
    from deftly.features.shell.fullscreen import full_screen_refusal
    from deftly.features.shell.rules import split_command

    def refused(command: str) -> bool:
        return full_screen_refusal(split_command(command), command) is not None

    assert not refused("emacs --batch -l build.el")
    assert not refused("nvim --headless +q")
    assert not refused("tmux new -d -s build make")
    assert not refused("ssh -p 2222 host uptime")
    assert refused("emacs -nw a.txt")
    assert refused("less -F README.md")  # -F pages too at a terminal: Read instead
    assert refused("ssh -p 2222 host")


def test_vi_through_deftly_call_returns_at_once(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    start = time.monotonic()
    result = subprocess.run(
        [DEFTLY, "call", "Bash", json.dumps({"command": "vi a.txt"}), "--yes", "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=workspace,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - start < 30
    assert result.returncode == 1
    output = json.loads(result.stdout)["output"]
    assert "vi is an interactive editor" in output and "Edit or Write" in output
