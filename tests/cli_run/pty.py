"""`deftly run` in a real pty (pexpect): starting it, the prompt, and /proc checks for
processes another process left behind."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from tests.cli import DEFTLY
from tests.conftest import subprocess_env
from tests.scripted.server import ModelServer

PROMPT = "›"
"""The interactive session's input prompt."""


def spawn_run(server: ModelServer, workspace: Path, *args: str) -> pexpect.spawn:
    """`deftly run ARGS` against `server`, at a 40x100 terminal (colours on)."""
    env = subprocess_env(
        OPENAI_API_KEY="k", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100", LINES="40"
    )
    env.pop("NO_COLOR", None)
    return pexpect.spawn(
        DEFTLY,
        [
            "run",
            "-w",
            str(workspace),
            "--base-url",
            server.openai_url,
            "--model",
            "scripted",
            *args,
        ],
        env=env,
        encoding="utf-8",
        dimensions=(40, 100),
        timeout=30,
    )


def spawn(server: ModelServer, workspace: Path, *args: str) -> pexpect.spawn:
    """The interactive session (`deftly run` with no prompt), once it shows its prompt."""
    child = spawn_run(server, workspace, *args)
    child.expect(PROMPT)
    return child


def processes_with(marker: str) -> list[int]:
    """The processes whose command line contains `marker` (a /proc scan)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def wait_for(condition: Callable[[], object], what: str, attempts: int = 300) -> None:
    """Poll a /proc condition until it holds (another process's children send no events
    to wait on); fails after `attempts` polls."""
    for _ in range(attempts):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
