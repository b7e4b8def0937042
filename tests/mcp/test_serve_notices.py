"""`deftly serve` tells its client when a background task ends: an MCP log message
(`notifications/message`, level info, logger "deftly.tasks") and the notice on the next
`tools/call` result (the real SDK client over a real stdio pipe)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY
from tests.shell.conftest import task_id_in


def _text(result: mt.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mt.TextContent))


def _params(workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(workspace), "--mode", "auto"], env=subprocess_env()
    )


async def test_the_client_gets_a_log_message_and_the_next_result_carries_it(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    logged: list[mt.LoggingMessageNotificationParams] = []
    arrived = asyncio.Event()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logged.append(params)
        arrived.set()

    async with Client(_params(workspace), mode="legacy", logging_callback=on_log) as client:
        started = await client.call_tool(
            "Bash", {"command": "exit 3", "run_in_background": True, "description": "quick"}
        )
        task_id = task_id_in(_text(started))
        await asyncio.wait_for(arrived.wait(), 30)
        [message] = logged
        assert (message.level, message.logger) == ("info", "deftly.tasks")
        assert f"Background task {task_id} (quick) ended: failed (exit code 3)" in str(message.data)
        read = await client.call_tool("Read", {"path": "a.txt"})
        assert not read.is_error
        assert f"Background task {task_id} (quick) ended" in _text(read)
        again = await client.call_tool("Read", {"path": "a.txt"})
        assert task_id not in _text(again)  # given out once


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_in_flight_carries_the_log_and_the_note(workspace: Path, mode: str) -> None:
    """On 2026-07-28 log messages ride only on a request that asked for them: a task that
    ends while a call runs is logged on that call's stream."""
    logged: list[Any] = []

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    waiting = "until [ -e go ]; do sleep 0.02; done; exit 0"
    async with Client(
        _params(workspace), mode=mode, logging_callback=on_log, log_level="info"
    ) as client:
        started = await client.call_tool("Bash", {"command": waiting, "run_in_background": True})
        task_id = task_id_in(_text(started))
        # this call lets the task end, and is still running when its ending is announced
        result = await client.call_tool("Bash", {"command": "touch go; sleep 3"})
        assert not result.is_error
        later = await client.call_tool("TaskList", {})
        texts = _text(result) + _text(later)
        assert texts.count(f"Background task {task_id}") == 1
    assert any(p.logger == "deftly.tasks" and task_id in str(p.data) for p in logged), logged
