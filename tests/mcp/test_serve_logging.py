"""`deftly serve` declares the logging capability and honours `logging/setLevel`: permission
decisions are debug messages a client gets only once it asks for debug, a raised level holds
back the info messages of background tasks (the real SDK client over a real stdio pipe), and
the notice table maps every kind to one logger and level."""

from __future__ import annotations

import asyncio
from pathlib import Path

import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters

from deftly.execution.events import RuntimeNotice
from deftly.serve.logging import LEVELS, NOTICE_ROUTES, passes, route_of
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY
from tests.mcp.test_serve_notices import _text
from tests.shell.conftest import task_id_in

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


class Logs:
    """The log messages a client received, with a way to wait for one."""

    def __init__(self) -> None:
        self.got: list[mt.LoggingMessageNotificationParams] = []
        self._arrived = asyncio.Condition()

    async def __call__(self, params: mt.LoggingMessageNotificationParams) -> None:
        async with self._arrived:
            self.got.append(params)
            self._arrived.notify_all()

    async def wait_for(
        self, logger: str, fragment: str = ""
    ) -> mt.LoggingMessageNotificationParams:
        def found() -> mt.LoggingMessageNotificationParams | None:
            return next(
                (p for p in self.got if p.logger == logger and fragment in str(p.data)), None
            )

        async with asyncio.timeout(30), self._arrived:
            await self._arrived.wait_for(lambda: found() is not None)
        hit = found()
        assert hit is not None
        return hit

    def loggers(self) -> set[str | None]:
        return {p.logger for p in self.got}


async def _background(client: Client, command: str) -> str:
    started = await client.call_tool("Bash", {"command": command, "run_in_background": True})
    return task_id_in(_text(started))


async def test_set_level_decides_what_is_sent(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    logs = Logs()
    params = StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(workspace), "--mode", "auto"], env=subprocess_env()
    )
    async with Client(params, mode="legacy", logging_callback=logs) as client:
        caps = client.server_capabilities
        assert caps is not None and caps.logging is not None
        # default (info and above): a task's ending arrives, no permission decision does
        first = await _background(client, "exit 0")
        await logs.wait_for("deftly.tasks", first)
        assert "deftly.permissions" not in logs.loggers()

        # at warning, a task's ending (info) is held back; back at info the next one arrives
        await client.set_logging_level("warning")
        held = await _background(client, "exit 0")
        await client.call_tool("WaitFor", {"task_ids": [held], "timeout": 60})
        await client.set_logging_level("info")
        after = await _background(client, "exit 0")
        await logs.wait_for("deftly.tasks", after)
        assert not any(held in str(p.data) for p in logs.got), "sent below the client's level"

        # at debug, each call's permission decision is sent too
        await client.set_logging_level("debug")
        read = await client.call_tool("Read", {"path": "a.txt"})
        assert not read.is_error
        decision = await logs.wait_for("deftly.permissions", "Read")
        assert decision.level == "debug"


def test_every_notice_kind_has_one_route_and_levels_order() -> None:
    assert {r.level for r in NOTICE_ROUTES.values()} <= set(LEVELS)
    assert route_of(RuntimeNotice("permission", "x")) == NOTICE_ROUTES["permission"]
    assert route_of(RuntimeNotice("tool_list", "x")) is None  # not for clients
    later = route_of(RuntimeNotice("mcp.something_new", "x"))
    assert later is not None and later.logger == "deftly.mcp"
    assert passes("warning", None) and not passes("debug", None)
    assert passes("debug", "debug") and not passes("info", "error")
