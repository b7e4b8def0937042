"""2026-07-28 clients hear list changes on `subscriptions/listen`: a mounted server that
connects only after the client's listen stream is open reaches it as a tools/list_changed
event, and a re-list then shows its tools (the real SDK client, default `auto` negotiation,
over a real stdio pipe and over streamable HTTP; the mount held back by a FIFO, not a sleep).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, fake
from tests.mcp.test_serve import http_serve

EVENT_SECONDS = 60.0
"""Generous for a loaded machine: the gated server starts a Python process once let go."""

GATE = (
    "import os, sys\n"
    "with open(sys.argv[1]) as gate: gate.read()\n"
    "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])\n"
)
"""Waits until the test writes to the FIFO and closes it, then becomes the fake server."""


def _servers(tmp_path: Path) -> tuple[Path, Path]:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    entry = fake(startup_timeout=120)
    entry["args"] = ["-c", GATE, str(gate), *entry["args"]]
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"late": {**entry, "command": sys.executable}}}))
    return servers, gate


def _open_gate(gate: Path) -> None:
    with open(gate, "w") as writer:  # blocks until serve has started the gated server
        writer.write("go")


@asynccontextmanager
async def _stdio(workspace: Path, servers: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=DEFTLY,
        args=["serve", "-w", str(workspace), "--mode", "auto", "--mcp-config", str(servers)],
        env=subprocess_env(),
    )
    async with Client(params) as client:
        yield client


@asynccontextmanager
async def _http(workspace: Path, servers: Path) -> AsyncIterator[Client]:
    async with (
        http_serve(workspace, "--mcp-config", str(servers)) as (url, _),
        httpx2.AsyncClient() as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


Connect = Callable[[Path, Path], AbstractAsyncContextManager[Client]]


@pytest.mark.parametrize("connect", [_stdio, _http], ids=["stdio", "http"])
async def test_a_late_mount_reaches_the_listen_stream(
    connect: Connect, workspace: Path, tmp_path: Path
) -> None:
    servers, gate = _servers(tmp_path)
    async with connect(workspace, servers) as client:
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        tools = client.server_capabilities.tools if client.server_capabilities else None
        assert tools is not None and tools.list_changed, "listChanged not declared"
        first = {t.name for t in (await client.list_tools()).tools}
        assert "Read" in first
        assert "mcp__late__echo" not in first  # it cannot start before the gate opens
        async with client.listen(tools_list_changed=True) as sub:
            assert sub.honored.tools_list_changed
            opener = asyncio.create_task(asyncio.to_thread(_open_gate, gate))
            events: list[Any] = []
            async with asyncio.timeout(EVENT_SECONDS):
                async for event in sub:
                    events.append(event)
                    later = {t.name for t in (await client.list_tools()).tools}
                    if "mcp__late__echo" in later:
                        break
            await asyncio.wait_for(opener, EVENT_SECONDS)
        assert events and all(isinstance(e, ToolsListChanged) for e in events)
        result = await client.call_tool("mcp__late__echo", {"text": "heard it"})
        assert not result.is_error
