"""A batch of one call takes a path of its own (no preparing queue, scheduler or watcher
task): it must keep every guarantee of the general path — the same events in the same
order, the same results, cancellation with grace."""

from __future__ import annotations

import asyncio
from pathlib import Path

from deftly.contract import CancelToken, ToolContext, ToolResult
from deftly.execution import Outcome, ToolCall
from deftly.execution.events import Event
from tests.execution.tools import WorkTool, executor, reporting


def _kinds(events: list[Event]) -> list[str]:
    return [type(event).__name__ for event in events]


async def test_one_call_gives_the_same_events_and_result_as_the_general_batch(
    tmp_path: Path,
) -> None:
    contexts: list[ToolContext] = []
    ex = executor(tmp_path, WorkTool("Work", reporting(contexts)))
    seen: list[Event] = []
    ex.events.subscribe(seen.append)
    [alone] = await ex.run_batch([ToolCall("a", "Work", "{}")], turn_id="t1")
    fast_events = list(seen)
    seen.clear()
    batch = ex.open_batch(turn_id="t1")
    batch.add(ToolCall("a", "Work", "{}"))
    [general] = await batch.results()
    assert _kinds(fast_events) == _kinds(seen)
    assert _kinds(fast_events) == [
        "BatchStarted",
        "ToolCallStarted",
        "ToolProgress",
        "ToolCallFinished",
    ]
    assert alone.text == general.text == "ok"
    assert alone.outcome is general.outcome is Outcome.EXECUTED
    assert contexts[0].identity.turn_id == "t1"
    assert alone.started_at is not None and alone.finished_at is not None


async def test_one_call_rejected_in_preflight_is_finalized_like_any(tmp_path: Path) -> None:
    ex = executor(tmp_path, WorkTool("Work", reporting([])))
    [missing] = await ex.run_batch([ToolCall("a", "Nope", "{}")])
    [broken] = await ex.run_batch([ToolCall("b", "Work", "{not json")])
    assert missing.outcome is Outcome.PREFLIGHT_REJECTED and "no tool named" in missing.text
    assert broken.outcome is Outcome.PREFLIGHT_REJECTED and "not valid JSON" in broken.text


async def test_one_call_in_an_already_cancelled_batch_does_not_run(tmp_path: Path) -> None:
    ran: list[str] = []

    def work(ctx: ToolContext) -> ToolResult:
        ran.append(ctx.call_id)
        return ToolResult.ok("ran")

    ex = executor(tmp_path, WorkTool("Work", work))
    token = CancelToken()
    token.cancel("stop")
    [result] = await ex.run_batch([ToolCall("a", "Work", "{}")], cancel=token)
    assert ran == []
    assert result.outcome is Outcome.CANCELLED and "stop" in result.text


async def test_one_stubborn_call_is_cut_off_after_the_grace(tmp_path: Path) -> None:
    started = asyncio.Event()
    never = asyncio.Event()

    async def stubborn(ctx: ToolContext) -> ToolResult:
        started.set()
        while True:  # ignores the token: only the grace timer can stop it
            await never.wait()

    ex = executor(tmp_path, WorkTool("Stubborn", stubborn), grace_seconds=0.05)
    token = CancelToken()
    task = asyncio.ensure_future(ex.run_batch([ToolCall("a", "Stubborn", "{}")], cancel=token))
    await asyncio.wait_for(started.wait(), 10)
    token.cancel("enough")
    [result] = await asyncio.wait_for(task, 10)
    assert result.is_error and "cancelled" in result.text and "enough" in result.text


async def test_one_call_that_ends_within_the_grace_keeps_its_result(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def polite(ctx: ToolContext) -> ToolResult:
        started.set()
        await ctx.cancel.wait()
        return ToolResult.ok("stopped cleanly")

    ex = executor(tmp_path, WorkTool("Polite", polite), grace_seconds=30)
    token = CancelToken()
    task = asyncio.ensure_future(ex.run_batch([ToolCall("a", "Polite", "{}")], cancel=token))
    await asyncio.wait_for(started.wait(), 10)
    token.cancel()
    [result] = await asyncio.wait_for(task, 10)
    assert result.text == "stopped cleanly"
    assert not token._callbacks  # the watcher was removed once the call ended


def test_on_cancel_calls_back_once_and_can_be_stopped() -> None:
    token = CancelToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("kept"))
    stop = token.on_cancel(lambda: calls.append("stopped"))
    stop()
    token.cancel("first")
    token.cancel("second")
    assert calls == ["kept"]
    assert token.reason == "first"
