"""Cancelling a turn: running tools report cancelled, no process survives, the model is
told next time."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from deftly.agent import Agent, AgentEvent
from deftly.agent import events as ev
from tests.agent.loop.helpers import content_text, openai_provider
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

MARKER = "31.4159"


def sleepers() -> list[int]:
    """Processes running our uniquely-timed sleep."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"sleep {MARKER}" in cmdline and str(os.getpid()) != entry.name:
            found.append(int(entry.name))
    return found


async def test_cancel_during_a_running_bash_leaves_no_process(make_runtime: Any) -> None:
    runtime = await make_runtime()
    command = f"echo started; sleep {MARKER}"
    script = [calls(Call("Bash", {"command": command})), say("after")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        events: list[AgentEvent] = []
        started = asyncio.Event()

        async def watch() -> None:
            async for event in agent.stream("sleep"):
                events.append(event)
                if isinstance(event, ev.ToolProgress) and "started" in event.text:
                    started.set()

        watcher = asyncio.ensure_future(watch())
        await asyncio.wait_for(started.wait(), 60)
        assert sleepers()
        agent.cancel()
        await asyncio.wait_for(watcher, 60)
        end = events[-1]
        assert isinstance(end, ev.TurnEnded) and end.stop_reason == "cancelled"
        [result] = [e for e in events if isinstance(e, ev.ToolResult)]
        assert result.is_error and "interrupted" in result.output
        assert sleepers() == []
        # The next turn carries the call, its cancelled result, and the reminder.
        await agent.run("what happened?")
        await agent.aclose()
    texts = [content_text(m) for m in server.requests[1]["messages"]]
    assert any("interrupted by the user" in t for t in texts)
    assert len(server.requests) == 2
