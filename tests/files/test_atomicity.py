"""Writes never leave a torn file: a process killed mid-write, and a full disk.

Both run real child processes: one is killed with SIGKILL at random moments while it
writes a large file through the Write tool, again and again; the other runs under
RLIMIT_FSIZE, so the kernel refuses to let any file grow past a limit (EFBIG), exactly
as a full disk refuses with ENOSPC.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

# Each writer is a child process with a local runtime of its own.
pytestmark = pytest.mark.local_env

LINE_A = "a" * 79 + "\n"
LINE_B = "b" * 59 + "\n"
A_LINES = 200_000  # 16 MB
B_LINES = 150_000  # 9 MB

WRITER = r"""
import asyncio, sys
from deftly import Runtime

async def main() -> None:
    contents = [{a!r} * {na}, {b!r} * {nb}]
    async with Runtime(sys.argv[1], config={{}}, plugins=False, approve_asks=True) as rt:
        turn = 0
        while True:
            result = await rt.call("Write", {{"path": "big.txt", "content": contents[turn % 2]}})
            assert not result.is_error, result.text
            if turn == 0:
                print("ready", flush=True)  # writing back to back from now on
            turn += 1

asyncio.run(main())
"""


def test_sigkill_during_writes_never_leaves_a_torn_file(workspace: Path) -> None:
    code = WRITER.format(a=LINE_A, na=A_LINES, b=LINE_B, nb=B_LINES)
    target = workspace / "big.txt"
    valid = {len(LINE_A) * A_LINES: LINE_A, len(LINE_B) * B_LINES: LINE_B}
    rng = random.Random(20240501)
    leftovers = 0
    # At least 12 kills; more (up to 40) until one has landed in the middle of a write, so
    # a slow, loaded machine cannot make the last assertion fail by chance.
    for attempt in range(40):
        if attempt >= 12 and leftovers:
            break
        child = subprocess.Popen(
            [sys.executable, "-c", code, str(workspace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=subprocess_env(),
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", (
            child.stderr.read() if child.stderr else ""
        )
        time.sleep(rng.uniform(0.05, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
        if target.exists():
            data = target.read_bytes()
            assert len(data) in valid, f"torn file: {len(data)} bytes"
            line = valid[len(data)].encode()
            assert data == line * (len(data) // len(line))
        leftovers += sum(1 for name in os.listdir(workspace) if name.endswith(".deftly-tmp"))
    assert target.exists()
    # Each leftover temporary file is a write the kill interrupted: the test did hit writes
    # in the middle, and the target stayed whole every time.
    assert leftovers >= 1


FULL_DISK = r"""
import asyncio, json, resource, signal, sys
from pathlib import Path
from deftly import Runtime

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
LIMIT = 64 * 1024
resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

async def main() -> None:
    ws = Path(sys.argv[1])
    out = {}
    async with Runtime(ws, config={}, plugins=False, approve_asks=True) as rt:
        big = "z" * (LIMIT * 2)
        out["write"] = (await rt.call("Write", {"path": "small.txt", "content": big})).text
        out["append"] = (
            await rt.call("Write", {"path": "small.txt", "content": big, "mode": "append"})
        ).text
        out["edit"] = (
            await rt.call("Edit", {"path": "small.txt", "old_string": "keep", "new_string": big})
        ).text
        out["new"] = (await rt.call("Write", {"path": "fresh.txt", "content": big})).text
    print(json.dumps(out))

asyncio.run(main())
"""


def test_a_full_disk_leaves_files_byte_for_byte(workspace: Path) -> None:
    original = b"keep this exactly\r\n"
    (workspace / "small.txt").write_bytes(original)
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(workspace)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for key in ("write", "append", "edit", "new"):
        assert "left as it was" in results[key] or "could not" in results[key], results[key]
        assert "Traceback" not in results[key]
    assert (workspace / "small.txt").read_bytes() == original
    assert not (workspace / "fresh.txt").exists()
    assert [n for n in os.listdir(workspace) if n.endswith(".deftly-tmp")] == []
