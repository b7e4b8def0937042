"""A background task's ending is told to the agent that started it, not to whichever
agent happens to drain its channel first."""

from __future__ import annotations

import asyncio
from pathlib import Path

from deftly import Runtime, ToolCall
from deftly.execution.events import Event, RuntimeNotice
from deftly.execution.notices import TASK_FINISHED_KIND


async def test_the_ending_reaches_the_agent_that_started_the_task(workspace: Path) -> None:
    async with Runtime(workspace, config={}, plugins=False, approve_asks=True) as rt:
        ended = asyncio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, RuntimeNotice) and event.kind == "task_finished":
                ended.set()

        rt.subscribe(on_event)
        child = await rt.agent.spawn_child("helper")
        [started] = await child.run_batch(
            [ToolCall("c1", "Bash", {"command": "echo done", "run_in_background": True})]
        )
        assert not started.is_error, started.text
        await asyncio.wait_for(ended.wait(), 60)

        assert [i for i in rt.agent.injections.drain() if i.kind == TASK_FINISHED_KIND] == []
        told = [i for i in child.injections.drain() if i.kind == TASK_FINISHED_KIND]
        assert len(told) == 1 and "echo done" in told[0].text
        assert child.injections.drain() == []  # told once


async def test_the_main_agents_own_task_still_rides_on_its_next_result(workspace: Path) -> None:
    async with Runtime(workspace, config={}, plugins=False, approve_asks=True) as rt:
        ended = asyncio.Event()
        rt.subscribe(
            lambda e: (
                ended.set() if isinstance(e, RuntimeNotice) and e.kind == "task_finished" else None
            )
        )
        child = await rt.agent.spawn_child("helper")
        await rt.call("Bash", {"command": "echo mine", "run_in_background": True})
        await asyncio.wait_for(ended.wait(), 60)
        on_child = await child.run_batch([ToolCall("c2", "Bash", {"command": "true"})])
        assert "echo mine" not in (on_child[0].result.note or "")
        result = await rt.call("Bash", {"command": "true"})
        assert "echo mine" in (result.result.note or "")
