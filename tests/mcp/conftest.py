"""Helpers for the MCP tests: the fake server, waiting for processes and ports."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trust_folder

FAKE_SERVER = str(Path(__file__).with_name("fake_server.py"))
RICH_SERVER = str(Path(__file__).with_name("rich_server.py"))
ERAS = {"2026-07-28": (), "2025-11-25": ("--legacy",)}
"""The protocol eras a mounted SDK server can speak, and the rich server's flags for each."""
DEFTLY = str(Path(sys.executable).with_name("deftly"))

HELPER_TOOLS = [
    "tests.helpers:EchoTool",
    "tests.helpers:SleepTool",
    "tests.helpers:TickTool",
    "tests.helpers:PictureTool",
    "tests.helpers:BrokenTool",
]


def fake(*args: str, **extra: Any) -> dict[str, Any]:
    """An mcp.json entry that starts the fake server with these options."""
    return {"command": sys.executable, "args": [FAKE_SERVER, *args], **extra}


def rich(*args: str, **extra: Any) -> dict[str, Any]:
    """An mcp.json entry that starts the rich (MCPServer) test server."""
    return {"command": sys.executable, "args": [RICH_SERVER, *args], **extra}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited; its parent just has not reaped it yet
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return True
    return state != "Z"


def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


async def eventually(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    """`wait_until` for async tests: the event loop keeps running while we wait."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def serve_workspace(workspace: Path) -> Path:
    """A workspace whose config loads the small test tools (the built-ins come later)."""
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    loads = ", ".join(f'"{t}"' for t in HELPER_TOOLS)
    config.write_text(f"[tools]\nload = [{loads}]\n", encoding="utf-8")
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    trust_folder(workspace)  # its [tools] load runs code: trusted, as by `deftly trust`
    return workspace
