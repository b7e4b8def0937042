"""The sole-call rule: a tool with `alone_in_reply` runs only as the only call of its reply.
Streamed calls arrive before the reply is complete, so such a call is held until the batch
is sealed; then it is refused when the reply holds any other call, and the others run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from deftly.contract import Accesses, CancelToken, ToolContext, ToolExecution, ToolResult
from deftly.contract.traits import ToolTraits
from deftly.execution import Outcome, ToolCall
from deftly.execution.alone import alone_refusal
from tests.execution.tools import Free, WorkTool, calls, executor


class LoneTool(WorkTool):
    """A tool that must be the only call of its reply; counts its resolves and runs."""

    traits = ToolTraits(alone_in_reply=True)

    def __init__(self, name: str = "Lone") -> None:
        super().__init__(name, self._run, self._resolved)
        self.resolves = 0
        self.runs = 0

    def _resolved(self, args: Free) -> ToolExecution:
        self.resolves += 1
        return ToolExecution(approval_rule=self.name, accesses=Accesses.all(), execute=self._run)

    def _run(self, ctx: ToolContext) -> ToolResult:
        self.runs += 1
        return ToolResult.ok("lone ran")


def echo() -> WorkTool:
    return WorkTool("Echo", lambda ctx: ToolResult.ok("echo ran"))


async def test_alone_it_runs(tmp_path: Path) -> None:
    lone = LoneTool()
    [result] = await executor(tmp_path, lone).run_batch(calls("Lone"))
    assert not result.is_error and result.text == "lone ran"
    assert lone.runs == 1


async def test_with_another_call_it_is_refused_and_the_other_runs(tmp_path: Path) -> None:
    lone = LoneTool()
    first, second = await executor(tmp_path, lone, echo()).run_batch(calls("Lone", "Echo"))
    assert first.is_error and first.outcome is Outcome.VETOED
    assert "must be the only tool call" in first.text and "Echo" in first.text
    assert not second.is_error and second.text == "echo ran"
    assert lone.resolves == 0 and lone.runs == 0


async def test_twice_in_a_reply_both_are_refused_one_at_a_time(tmp_path: Path) -> None:
    lone = LoneTool()
    results = await executor(tmp_path, lone).run_batch(calls("Lone", "Lone"))
    assert all(r.is_error and "one at a time" in r.text for r in results)
    assert "only tool call" not in results[0].text
    assert lone.runs == 0


async def test_twice_and_with_others_says_both(tmp_path: Path) -> None:
    results = await executor(tmp_path, LoneTool(), echo()).run_batch(calls("Echo", "Lone", "Lone"))
    assert not results[0].is_error
    for result in results[1:]:
        assert "one at a time" in result.text and "only tool call" in result.text


async def test_a_streamed_call_is_held_until_the_reply_is_sealed(tmp_path: Path) -> None:
    lone = LoneTool()
    batch = executor(tmp_path, lone, echo()).open_batch()
    held = batch.add(ToolCall("c1", "Lone", {}))
    # When it arrived it was the only call: had it not been held, it would have run.
    later = batch.add(ToolCall("c2", "Echo", {}))
    batch.seal()
    first, second = await batch.results()
    assert held.result() is first
    assert first.outcome is Outcome.VETOED and "must be the only tool call" in first.text
    assert second is later.result() and second.text == "echo ran"
    assert lone.runs == 0


async def test_calls_before_it_are_not_held(tmp_path: Path) -> None:
    batch = executor(tmp_path, LoneTool(), echo()).open_batch()
    before = batch.add(ToolCall("c1", "Echo", {}))
    record = await before  # finished while the reply is still open
    assert record.text == "echo ran"
    batch.add(ToolCall("c2", "Lone", {}))
    _, lone = await batch.results()
    assert lone.outcome is Outcome.VETOED


async def test_sealed_alone_it_runs(tmp_path: Path) -> None:
    lone = LoneTool()
    batch = executor(tmp_path, lone).open_batch()
    future = batch.add(ToolCall("c1", "Lone", {}))
    batch.seal()
    assert (await future).text == "lone ran"
    await batch.results()
    assert lone.runs == 1


async def test_an_identical_call_shared_by_the_caller_counts(tmp_path: Path) -> None:
    lone = LoneTool()
    batch = executor(tmp_path, lone).open_batch()
    batch.add(ToolCall("c1", "Lone", {}))
    batch.seal([ToolCall("c2", "Lone", {})])
    [result] = await batch.results()
    assert "one at a time" in result.text and lone.runs == 0


async def test_a_cancelled_batch_releases_a_held_call(tmp_path: Path) -> None:
    lone = LoneTool()
    token = CancelToken()
    batch = executor(tmp_path, lone).open_batch(cancel=token)
    future = batch.add(ToolCall("c1", "Lone", {}))
    token.cancel("stopped", by_user=True)
    record = await asyncio.wait_for(future, 30)  # not sealed: the cancel alone frees it
    assert record.outcome is Outcome.CANCELLED and "interrupted" in record.text
    await batch.results()
    assert lone.resolves == 0


async def test_no_call_may_be_added_once_sealed(tmp_path: Path) -> None:
    batch = executor(tmp_path, echo()).open_batch()
    batch.seal()
    try:
        batch.add(ToolCall("c1", "Echo", {}))
    except RuntimeError as exc:
        assert "closed" in str(exc)
    else:
        raise AssertionError("a sealed batch took a call")
    assert await batch.results() == []


def test_the_refusal_texts() -> None:
    assert alone_refusal("Lone", ["Lone"]) is None
    mixed = alone_refusal("Lone", ["Read", "Lone", "Bash", "Read"])
    assert mixed is not None and "Bash, Read" in mixed and "ran as usual" in mixed
    twice = alone_refusal("Lone", ["Lone", "Lone", "Lone"])
    assert twice is not None and "3 times" in twice and "only tool call" not in twice
