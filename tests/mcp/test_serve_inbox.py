"""`deftly serve` consumes its agent's inbox: a message that arrives (a cron job firing)
reaches the real `mcp` SDK client as a log message (logger "deftly.cron")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp.types as mt
from mcp import Client, StdioServerParameters

from deftly.serve.server import ToolServer
from deftly.session.inbox import InboxMessage
from tests.cli_run.test_interactive_inbox import FileClock, clock
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, eventually

__all__ = ["clock"]  # the fixture, used by name

FIRE = "<cron-fire id='0123abcd'>run the nightly check</cron-fire>"


async def test_an_inbox_message_reaches_the_client_as_a_log_message(make_runtime: Any) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    logged: list[mt.LoggingMessageNotificationParams] = []
    arrived = asyncio.Event()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logged.append(params)
        arrived.set()

    server = ToolServer(runtime, inbox=inbox)
    try:
        assert inbox.consumed and not inbox.idle  # no client yet: nobody to tell
        async with Client(server.server, mode="legacy", logging_callback=on_log) as client:
            await client.list_tools()
            assert await eventually(lambda: inbox.idle)
            inbox.put(InboxMessage(FIRE, {"kind": "cron_job", "job_id": "0123abcd"}))
            await asyncio.wait_for(arrived.wait(), 30)
            arrived.clear()
            inbox.put(InboxMessage("something else"))
            await asyncio.wait_for(arrived.wait(), 30)
    finally:
        await server.aclose()
    assert [(p.level, p.logger, p.data) for p in logged] == [
        ("info", "deftly.cron", FIRE),
        ("info", "deftly.inbox", "something else"),
    ]
    assert not inbox.consumed and len(inbox) == 0


async def test_after_the_workspace_moves_the_new_runtimes_inbox_is_relayed(
    make_runtime: Any, tmp_path: Path
) -> None:
    """A roots move serves another runtime: its inbox is the one relayed from then on, and
    the old one is let go (its messages stay in it)."""
    moved_to = tmp_path / "moved"
    moved_to.mkdir()
    old, fresh = await make_runtime(), await make_runtime(root=moved_to)
    logged: list[str] = []
    arrived = asyncio.Event()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))
        arrived.set()

    server = ToolServer(old, inbox=old.agent.inbox)
    try:
        async with Client(server.server, mode="legacy", logging_callback=on_log) as client:
            await client.list_tools()
            await server.replace_host(fresh, inbox=fresh.agent.inbox)
            assert not old.agent.inbox.consumed and fresh.agent.inbox.consumed
            old.agent.inbox.put(InboxMessage("for the old runtime"))
            fresh.agent.inbox.put(InboxMessage(FIRE, {"kind": "cron_job", "job_id": "0123abcd"}))
            await asyncio.wait_for(arrived.wait(), 30)
    finally:
        await server.aclose()
    assert logged == [FIRE]
    assert len(old.agent.inbox) == 1  # kept, not lost


async def test_a_server_without_an_inbox_does_not_consume_it(make_runtime: Any) -> None:
    runtime = await make_runtime()
    server = ToolServer(runtime)
    try:
        async with Client(server.server, mode="legacy") as client:
            await client.list_tools()
            assert not runtime.agent.inbox.consumed
    finally:
        await server.aclose()


async def test_deftly_serve_lists_the_cron_tools_and_a_fire_reaches_the_client(
    workspace: Path, clock: FileClock
) -> None:
    logged: list[mt.LoggingMessageNotificationParams] = []
    arrived = asyncio.Event()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        if params.logger == "deftly.cron":
            logged.append(params)
            arrived.set()

    params = StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(workspace), "--mode", "auto"], env=subprocess_env()
    )
    async with Client(params, mode="legacy", logging_callback=on_log) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"CronCreate", "CronList", "CronDelete"} <= names
        created = await client.call_tool(
            "CronCreate", {"cron": "* * * * *", "prompt": "look at the queue"}
        )
        assert not created.is_error, created
        clock.advance(60)
        await asyncio.wait_for(arrived.wait(), 30)
    [message] = logged
    assert message.level == "info"
    assert str(message.data).startswith("<cron-fire") and "look at the queue" in str(message.data)
