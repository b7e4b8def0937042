"""Fixtures for the shell tests: runtimes with Bash, unique process markers, /proc scans."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.env import ExecEnv
from deftly.features.shell import BackgroundTasks


@pytest.fixture
async def shell(make_runtime: Callable[..., Any]) -> Callable[..., Any]:
    """`await shell(**shell_config)`: a started runtime with the shell tools."""

    async def make(**shell_config: Any) -> Runtime:
        config = {"shell": {"kill_grace": 2.0, **shell_config}}
        runtime: Runtime = await make_runtime(config=config, approve_asks=True)
        return runtime

    return make


def tasks_of(runtime: Runtime) -> BackgroundTasks:
    return runtime.service(BackgroundTasks)


def env_of(runtime: Runtime) -> ExecEnv:
    """The env the runtime's tools use: read what they name (logs) through it, so a test
    works in any env (in the rooted run a log's path is a virtual one)."""
    return runtime.service(ExecEnv)


def read_named(runtime: Runtime, path: str | Path) -> bytes:
    """The content of a file the tools named (a `log_path:`), read through their env."""
    return env_of(runtime).read_bytes(Path(path))


def new_marker() -> str:
    return f"deftlytest{uuid.uuid4().hex[:12]}"


def processes_with(marker: str) -> list[int]:
    """Living processes whose command line contains `marker` (zombies do not count, nor
    the sandbox's bubblewrap processes, whose arguments hold the whole command: they end
    with the command's processes)."""
    found = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        if os.path.basename(cmdline.split(b"\0", 1)[0]) == b"bwrap":
            continue
        if needle in cmdline and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def marked_sleep(marker: str, seconds: int = 30) -> str:
    """A shell command that sleeps with `marker` in its command line (argv[0])."""
    return f"exec -a {marker} sleep {seconds}"


def exec_started(marker: str) -> bool:
    """Whether a process already runs *as* `marker` (argv[0]): the `exec` in
    `marked_sleep` happened, so everything the shell did before it (a `trap`) is in place.
    (`processes_with` also matches the shell itself, whose command line holds the marker.)"""
    needle = marker.encode() + b"\0"
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/cmdline").read_bytes().startswith(needle):
                    return True
            except OSError:
                continue
    return False


async def eventually(predicate: Callable[[], bool], seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


def task_id_in(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("task_id: "):
            return line.removeprefix("task_id: ").strip()
    raise AssertionError(f"no task_id in:\n{text}")
