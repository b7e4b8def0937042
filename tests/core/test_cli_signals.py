"""SIGTERM and SIGHUP stop `deftly call` and `deftly batch` the way Ctrl-C does: the running
command is stopped, the runtime closes, and deftly exits non-zero, with nothing left behind
(counted with `pgrep -f MARKER` and by the environment every descendant inherits)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _survivors(token: str) -> list[int]:
    """Processes whose environment carries `token` (every descendant of the deftly run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"DEFTLY_SIGNAL_TEST={token}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _pgrep(pattern: str) -> str:
    return subprocess.run(
        ["pgrep", "-af", pattern], capture_output=True, text=True, check=False
    ).stdout


def _wait_for(path: Path, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"deftly exited early: {process.communicate()}")
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)


def _start(
    workspace: Path, sandbox: str | None, argv: list[str], token: str
) -> subprocess.Popen[bytes]:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[shell]\nsandbox = "{sandbox}"\n' if sandbox else "")
    return subprocess.Popen(
        [DEFTLY, *argv, "-w", str(workspace)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(DEFTLY_SIGNAL_TEST=token),
        cwd=workspace,
    )


def _stop_and_check(process: subprocess.Popen[bytes], signum: int, marker: str, token: str) -> str:
    assert _survivors(token), "the test cannot see the command it means to stop"
    process.send_signal(signum)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("deftly did not exit promptly after the signal") from None
    assert process.returncode == 128 + signum, stderr
    # The runtime closed before deftly exited: nothing is left, no grace period needed.
    assert _pgrep(marker) == ""
    assert _survivors(token) == []
    return stderr.decode()


@pytest.mark.parametrize(
    ("signum", "sandbox"),
    [(signal.SIGTERM, "none"), (signal.SIGHUP, "none"), (signal.SIGTERM, None)],
    ids=["SIGTERM-no-sandbox", "SIGHUP-no-sandbox", "SIGTERM-default-sandbox"],
)
def test_a_signal_stops_deftly_call_and_its_command(
    workspace: Path, signum: int, sandbox: str | None
) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    token = uuid.uuid4().hex
    command = f"touch started; sleep 1000 # {marker}"
    process = _start(
        workspace, sandbox, ["call", "--yes", "Bash", json.dumps({"command": command})], token
    )
    _wait_for(workspace / "started", process)
    stderr = _stop_and_check(process, signum, marker, token)
    assert f"stopped by {signal.Signals(signum).name}" in stderr
    assert "Traceback" not in stderr


def test_sighup_stops_deftly_batch_and_every_call(workspace: Path) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    token = uuid.uuid4().hex
    lines = [
        {
            "id": f"c{n}",
            "name": "Bash",
            "arguments": {"command": f"touch s{n}; sleep 1000 # {marker}"},
        }
        for n in (1, 2)
    ]
    batch = workspace / "calls.jsonl"
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines))
    process = _start(workspace, "none", ["batch", "--yes", str(batch)], token)
    _wait_for(workspace / "s1", process)
    _stop_and_check(process, signal.SIGHUP, marker, token)
