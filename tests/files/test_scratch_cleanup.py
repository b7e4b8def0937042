"""The scratch file of an atomic write killed half-way is removed by the next runtime.

A real process writes a large file with Write and is killed with SIGKILL while the write
is under way; a new runtime on the same data home then removes what it left, and leaves
alone the scratch file of a writer that is still running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.env.scratch import SUFFIX
from tests.conftest import subprocess_env

# The scratch journal is the local env's (a rooted env hands it to its local one).
pytestmark = pytest.mark.local_env

SIZE = 48 * 1024 * 1024

# The writer holds inside fsync (after the data went into the scratch file, before the
# rename): the one moment a kill must not leave garbage, made to last so the kill lands
# there every time. Everything else (Write, the runtime, the kill) is real.
WRITER = f"""
import asyncio, os, sys, time
from pathlib import Path
from deftly import Runtime

ready = Path(sys.argv[2])
real_fsync = os.fsync
def slow_fsync(fd):
    if os.fstat(fd).st_size >= {SIZE}:
        ready.write_text("mid-write")
        time.sleep(600)
    real_fsync(fd)
os.fsync = slow_fsync

async def main():
    async with Runtime(sys.argv[1], plugins=False, approve_asks=True) as rt:
        await rt.call("Write", {{"path": "big.txt", "content": "x" * {SIZE}}})

asyncio.run(main())
"""


def scratch_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(SUFFIX)]


def start_writer(
    workspace: Path, tmp_path: Path, name: str
) -> tuple[subprocess.Popen[bytes], Path]:
    ready = tmp_path / f"{name}.ready"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(workspace), str(ready)], env=subprocess_env()
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, "the writer ended before writing"
        assert time.monotonic() < deadline, "the writer never got to its write"
        time.sleep(0.02)
    return child, ready


async def test_a_write_killed_half_way_leaves_nothing_after_the_next_start(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "big.txt").write_text("old\n")
    child, _ = start_writer(workspace, tmp_path, "killed")
    child.send_signal(signal.SIGKILL)
    child.wait()
    [left] = scratch_files(workspace)
    assert left.stat().st_size == SIZE  # before: the whole file's size left behind
    assert (workspace / "big.txt").read_text() == "old\n"  # the old file, whole
    assert f".big.txt.{child.pid}-" in left.name  # whose it is, from its name

    async with Runtime(workspace, plugins=False):
        pass
    assert scratch_files(workspace) == []
    assert (workspace / "big.txt").read_text() == "old\n"


async def test_a_live_writers_scratch_file_is_left_alone(workspace: Path, tmp_path: Path) -> None:
    child, _ = start_writer(workspace, tmp_path, "alive")
    try:
        [held] = scratch_files(workspace)
        async with Runtime(workspace, plugins=False):
            pass
        assert held.exists()  # its writer still runs
    finally:
        child.kill()
        child.wait()
    async with Runtime(workspace, plugins=False):
        pass
    assert scratch_files(workspace) == []


async def test_a_scratch_name_of_a_reused_pid_counts_as_dead(workspace: Path) -> None:
    # A name whose pid runs now, but with another start time, is an earlier writer's.
    from deftly.env.scratch import ScratchJournal

    home = Path(os.environ["DEFTLY_HOME"])
    stale = workspace / f".a.txt.{os.getpid()}-1-0123abcd{SUFFIX}"
    stale.write_bytes(b"half")
    journal = home / "scratch" / f"{os.getpid()}-1"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_bytes(os.fsencode(workspace) + b"\n")
    removed = ScratchJournal(home / "scratch").remove_stale()
    assert removed == [stale] and not journal.exists()


async def test_a_successful_write_notes_its_folder_once_and_leaves_no_scratch(
    workspace: Path,
) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        for n in range(3):
            result = await rt.call("Write", {"path": "a.txt", "content": f"v{n}\n"})
            assert not result.is_error, result.text
        journals = list((rt.home / "scratch").iterdir())
        [mine] = [j for j in journals if j.name.startswith(f"{os.getpid()}-")]
        assert mine.read_bytes().splitlines() == [os.fsencode(workspace)]
    assert scratch_files(workspace) == []
