"""`deftly serve` answers at once whatever its mounted servers do: a server that never
answers `initialize` does not hold up the client's first `tools/list`, a good server beside
it joins later with `notifications/tools/list_changed` (and a log message saying it
connected), and closing stdin during the hang ends the process promptly (the real SDK
client over a real stdio pipe, real fake servers)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import mcp.types as mt
from mcp import Client, StdioServerParameters

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, alive, fake, wait_until

FIRST_LIST_SECONDS = 10.0
"""Generous for a loaded machine; the hanging server's own timeout is 60 s."""


def _servers(tmp_path: Path) -> tuple[Path, Path]:
    pid_file = tmp_path / "hang.pid"
    servers = tmp_path / "servers.json"
    hang = fake("--pid-file", str(pid_file), "--hang-on-start", startup_timeout=60)
    servers.write_text(json.dumps({"mcpServers": {"hang": hang, "good": fake()}}))
    return servers, pid_file


async def test_first_list_at_once_and_the_good_server_joins_later(
    workspace: Path, tmp_path: Path
) -> None:
    servers, pid_file = _servers(tmp_path)
    changed = asyncio.Event()
    logs: list[mt.LoggingMessageNotificationParams] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            changed.set()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    params = StdioServerParameters(
        command=DEFTLY,
        args=["serve", "-w", str(workspace), "--mode", "auto", "--mcp-config", str(servers)],
        env=subprocess_env(),
    )
    started = time.monotonic()
    async with Client(
        params, mode="legacy", message_handler=on_message, logging_callback=on_log
    ) as client:
        first = {t.name for t in (await client.list_tools()).tools}
        took = time.monotonic() - started
        assert took < FIRST_LIST_SECONDS, f"the first tools/list took {took:.1f}s"
        assert capabilities_declare_changes(client)
        assert "Read" in first
        assert not any(name.startswith("mcp__hang__") for name in first)
        if "mcp__good__echo" not in first:  # it may have been quicker than the client
            await asyncio.wait_for(changed.wait(), 30)
        later = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__good__echo" in later
        result = await client.call_tool("mcp__good__echo", {"text": "late but here"})
        assert not result.is_error
        assert not any(name.startswith("mcp__hang__") for name in later)
        # a built-in call is not held up by the hanging server either
        read = await client.call_tool("Glob", {"pattern": "*"})
        assert not read.is_error
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text().isdigit(), 30)
        hang_pid = int(pid_file.read_text())
    # the SDK's client closes our stdin, waits 2 s and sends SIGTERM: mid-way through the
    # hanging server's own grace period, which must not leave it running
    assert wait_until(lambda: not alive(hang_pid), 15), "the hanging server was orphaned"


def capabilities_declare_changes(client: Client) -> bool:
    """Whether the server said its tool list may change (so clients listen for it)."""
    tools = client.server_capabilities.tools if client.server_capabilities else None
    return bool(tools and tools.list_changed)


def test_closing_stdin_during_the_hang_ends_serve(workspace: Path, tmp_path: Path) -> None:
    servers, pid_file = _servers(tmp_path)
    proc = subprocess.Popen(
        [DEFTLY, "serve", "-w", str(workspace), "--mcp-config", str(servers)],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text().isdigit(), 30)
        hang_pid = int(pid_file.read_text())
        assert proc.stdin is not None
        proc.stdin.close()
        closed = time.monotonic()
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - closed < 15, "serve kept running after stdin closed"
        assert wait_until(lambda: not alive(hang_pid), 15), "the hanging server was orphaned"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
