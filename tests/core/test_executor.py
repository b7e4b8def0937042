"""The executor's four phases, through a real runtime with small real tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from deftly import Accesses, ImagePart, PathSecurityError, Runtime, TextPart, Tool, ToolResult
from deftly.contract import CancelToken, ToolExecution
from deftly.execution import (
    AfterContext,
    Allow,
    BeforeContext,
    Outcome,
    Proceed,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    Veto,
)
from tests.helpers import BigTool, BrokenTool, EchoTool, SleepTool

ALL = [EchoTool, SleepTool, BigTool, BrokenTool]


class Free(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: object = None


class FuncTool(Tool[Free]):
    """A tool whose resolution is a function given by the test."""

    params = Free

    def __init__(self, name: str, resolve: Callable[[Free], Any]):
        self.name = name
        self.description = name
        self._resolve = resolve

    def resolve(self, args: Free) -> Any:
        return self._resolve(args)


def run(output: Any, **kw: Any) -> Callable[[Free], ToolExecution]:
    return lambda args: ToolExecution(
        approval_rule="x", accesses=Accesses.none(), execute=lambda ctx: output, **kw
    )


async def test_unknown_tool_gets_a_suggestion_and_events_stay_paired(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    events: list[Any] = []
    rt.subscribe(events.append)
    result = await rt.call("Ecoh", {"x": 1})
    assert result.is_error and result.outcome is Outcome.PREFLIGHT_REJECTED
    assert "There is no tool named \"Ecoh\". Did you mean 'Echo'?" in result.text
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.call_id for e in started] == [e.call_id for e in finished] == [result.tool_call_id]
    assert started[0].args == {"x": 1}


async def test_malformed_json_is_an_error_that_says_what_to_do(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    result = await rt.call("Echo", '{"text":"hi",}')
    assert result.is_error
    assert "not valid JSON" in result.text and "one JSON object" in result.text


async def test_arguments_can_be_empty_or_none(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=[FuncTool("Any", run(ToolResult.ok("ran")))])
    for raw in (None, "", "  ", "{}"):
        assert (await rt.call("Any", raw)).text == "ran"


async def test_policy_guard_rejects_before_validation(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL, config={"tools": {"disabled": ["Echo"]}})
    result = await rt.call("Echo", {"wrong": 1})
    assert "switched off by the tool policy" in result.text
    assert "Echo" not in [t.name for t in rt.tools()]


async def test_path_security_error_message_is_passed_through(make_runtime: Any) -> None:
    def refuse(args: Free) -> Any:
        raise PathSecurityError("PATH_SENSITIVE", ".env", '".env" is a secret.')

    rt: Runtime = await make_runtime(tools=[FuncTool("Guarded", refuse)])
    result = await rt.call("Guarded", {})
    assert result.text == '".env" is a secret.'
    assert result.outcome is Outcome.RESOLUTION_FAILED


@pytest.mark.parametrize(
    ("how", "outcome", "text"),
    [
        ("raise", Outcome.EXECUTED, 'Tool "Broken" failed: ValueError: tool blew up'),
        ("none", Outcome.EXECUTED, "returned nothing"),
        ("garbage", Outcome.EXECUTED, "returned a dict instead of a ToolResult"),
        ("resolve-raise", Outcome.RESOLUTION_FAILED, "could not prepare the call"),
        ("resolve-garbage", Outcome.RESOLUTION_FAILED, "resolved to a int"),
    ],
)
async def test_misbehaving_tools_become_error_results(
    make_runtime: Any, how: str, outcome: Outcome, text: str
) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    results = await rt.run_batch(
        [
            {"name": "Broken", "arguments": {"how": how}},
            {"name": "Echo", "arguments": {"text": "after"}},
        ]
    )
    assert results[0].is_error and results[0].outcome is outcome and text in results[0].text
    assert results[1].text == "after" and not results[1].is_error


async def test_results_come_back_in_call_order_whatever_the_completion_order(
    make_runtime: Any,
) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    results = await rt.run_batch(
        [
            {"id": "slow", "name": "Sleep", "arguments": {"path": "a", "seconds": 0.2}},
            {"id": "fast", "name": "Sleep", "arguments": {"path": "b", "seconds": 0.01}},
        ]
    )
    assert [r.tool_call_id for r in results] == ["slow", "fast"]
    assert results[1].finished_at is not None and results[0].finished_at is not None
    assert results[1].finished_at < results[0].finished_at


async def test_writes_to_one_path_are_serialised_reads_of_others_are_not(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    a, b, c = await rt.run_batch(
        [
            {"name": "Sleep", "arguments": {"path": "x", "write": True, "seconds": 0.1}},
            {"name": "Sleep", "arguments": {"path": "x", "seconds": 0.1}},
            {"name": "Sleep", "arguments": {"path": "y", "seconds": 0.1}},
        ]
    )
    assert b.started_at is not None and a.finished_at is not None and c.started_at is not None
    assert b.started_at >= a.finished_at
    assert c.started_at < a.finished_at


async def test_stop_batch_after_this_skips_the_rest(make_runtime: Any) -> None:
    ran: list[str] = []

    def stopper(args: Free) -> ToolExecution:
        return ToolExecution(
            approval_rule="s",
            accesses=Accesses.none(),
            stop_batch_after_this=True,
            execute=lambda ctx: (ran.append("first"), ToolResult.ok("first result"))[1],
        )

    rt: Runtime = await make_runtime(
        tools=[FuncTool("First", stopper), FuncTool("Second", run(ToolResult.ok("second")))]
    )
    first, second = await rt.run_batch([{"name": "First"}, {"name": "Second"}])
    assert first.text == "first result" and ran == ["first"]
    assert second.is_error and second.outcome is Outcome.SKIPPED
    assert '"First" ended this batch' in second.text


async def test_synthetic_results_from_resolve_are_not_executed(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(
        tools=[FuncTool("Synth", lambda args: ToolResult.error("nope, because"))]
    )
    result = await rt.call("Synth", {})
    assert result.outcome is Outcome.SYNTHETIC and result.text == "nope, because"


async def test_media_only_output_gets_a_text_part_and_text_parts_collapse(
    make_runtime: Any,
) -> None:
    image = ImagePart("aGk=", "image/png")
    rt: Runtime = await make_runtime(
        tools=[
            FuncTool("Img", run(ToolResult.ok([image]))),
            FuncTool("Txt", run(ToolResult.ok([TextPart("a"), TextPart("b")]))),
            FuncTool("Empty", run(ToolResult.ok(""))),
            FuncTool("Note", run(ToolResult.ok("x", note=""))),
        ]
    )
    img, txt, empty, note = await rt.run_batch(
        [{"name": "Img"}, {"name": "Txt"}, {"name": "Empty"}, {"name": "Note"}]
    )
    assert isinstance(img.output, list) and img.output[1] == image
    assert isinstance(img.output[0], TextPart) and "non-text" in img.output[0].text
    assert txt.output == "ab"
    assert "no output" in empty.text
    assert note.note is None


async def test_progress_events_arrive_in_order(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    updates: list[Any] = []
    rt.subscribe(lambda e: updates.append(e.update) if isinstance(e, ToolProgress) else None)
    await rt.call("Sleep", {"path": "a", "progress": True})
    assert [(u.kind, u.text, u.progress) for u in updates] == [
        ("stdout", "working", None),
        ("progress", None, 50),
    ]


async def test_started_events_come_in_model_order_with_display(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    started: list[ToolCallStarted] = []
    rt.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
    await rt.run_batch(
        [
            {"id": "1", "name": "Sleep", "arguments": {"path": "a"}},
            {"id": "2", "name": "Nope"},
            {"id": "3", "name": "Echo", "arguments": {"text": "hi"}},
        ]
    )
    assert [e.call_id for e in started] == ["1", "2", "3"]
    assert started[0].display is not None and started[0].display.kind == "file_io"
    assert started[2].description == "Echoing hi"


# -- hooks ---------------------------------------------------------------------------------


async def test_veto_and_allow_and_proceed(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    seen: list[str] = []
    metadata: list[object] = []

    async def veto_big(ctx: BeforeContext) -> Any:
        seen.append(f"veto:{ctx.call.name}")
        return Veto(ToolResult.error("forbidden")) if ctx.call.name == "Big" else None

    async def allow_echo(ctx: BeforeContext) -> Any:
        seen.append(f"allow:{ctx.call.name}")
        return Allow() if ctx.call.name == "Echo" else Proceed({"from": "proceed"})

    async def never_for_echo(ctx: BeforeContext) -> Any:
        seen.append(f"late:{ctx.call.name}")
        return Veto(ToolResult.error("late veto")) if ctx.call.name == "Echo" else None

    rt.before_hooks.add("veto", veto_big, order=0)
    rt.before_hooks.add("allow", allow_echo, order=1)
    rt.before_hooks.add("late", never_for_echo, order=2)

    def remember(args: Free) -> ToolExecution:
        return ToolExecution(
            approval_rule="m",
            accesses=Accesses.none(),
            execute=lambda ctx: (metadata.append(ctx.handoff(dict)), ToolResult.ok("meta"))[1],
        )

    rt.register_tool(FuncTool("Meta", remember))
    big, echo, meta = await rt.run_batch(
        [
            {"name": "Big", "arguments": {"chars": 10}},
            {"name": "Echo", "arguments": {"text": "hi"}},
            {"name": "Meta"},
        ]
    )
    assert big.text == "forbidden" and big.outcome is Outcome.VETOED
    assert echo.text == "hi"
    assert meta.text == "meta" and metadata == [{"from": "proceed"}]
    assert seen == ["veto:Big", "veto:Echo", "allow:Echo", "veto:Meta", "allow:Meta", "late:Meta"]


async def test_a_raising_before_hook_blocks_only_that_call(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)

    async def explode(ctx: BeforeContext) -> Any:
        if ctx.call.name == "Big":
            raise RuntimeError("hook bug")
        return None

    rt.before_hooks.add("explode", explode)
    big, echo = await rt.run_batch(
        [{"name": "Big", "arguments": {"chars": 3}}, {"name": "Echo", "arguments": {"text": "ok"}}]
    )
    assert big.is_error and 'check "explode" failed' in big.text and "hook bug" in big.text
    assert echo.text == "ok"


async def test_after_hooks_see_every_outcome_and_can_replace_results(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    outcomes: list[Outcome] = []

    async def observe(ctx: AfterContext) -> ToolResult | None:
        outcomes.append(ctx.outcome)
        if ctx.call.name == "Echo":
            return ToolResult.error("hook output")
        if ctx.call.name == "Big":
            raise RuntimeError("finalize crashed")
        return None

    rt.after_hooks.add("observe", observe)
    echo, big, missing = await rt.run_batch(
        [
            {"name": "Echo", "arguments": {"text": "x"}},
            {"name": "Big", "arguments": {"chars": 5}},
            {"name": "Missing"},
        ]
    )
    assert echo.is_error and echo.text == "hook output"
    assert big.is_error and "finalize crashed" in big.text and "lin" not in big.text
    assert sorted(outcomes) == sorted(
        [Outcome.EXECUTED, Outcome.EXECUTED, Outcome.PREFLIGHT_REJECTED]
    )
    assert missing.is_error


# -- cancellation ----------------------------------------------------------------------------


async def test_cancel_gives_grace_then_reports_cancelled(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    rt.agent.executor.grace_seconds = 0.2
    token = CancelToken()

    async def cancel_soon() -> None:
        await asyncio.sleep(0.1)
        token.cancel("stop")

    canceller = asyncio.create_task(cancel_soon())
    loop = asyncio.get_running_loop()
    begin = loop.time()
    slow, stubborn, queued = await rt.run_batch(
        [
            {"name": "Broken", "arguments": {"how": "slow"}},
            {"name": "Sleep", "arguments": {"path": "a", "write": True, "seconds": 5}},
            {"name": "Sleep", "arguments": {"path": "a", "seconds": 0.01}},
        ],
        cancel=token,
    )
    await canceller
    assert loop.time() - begin < 2
    assert slow.is_error and "cancelled before it finished" in slow.text and "stop" in slow.text
    assert stubborn.is_error and "cancelled" in stubborn.text
    assert queued.is_error and queued.outcome is Outcome.CANCELLED and queued.started_at is None


async def test_a_tool_that_finishes_within_grace_keeps_its_result(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    rt.agent.executor.grace_seconds = 1.0
    token = CancelToken()
    asyncio.get_running_loop().call_later(0.05, token.cancel)
    [result] = await rt.run_batch(
        [{"name": "Sleep", "arguments": {"path": "a", "seconds": 0.2}}], cancel=token
    )
    assert result.text == "slept on a"


async def test_cancelling_the_caller_stops_the_tools_and_reraises(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    rt.agent.executor.grace_seconds = 0.1
    finished: list[ToolCallFinished] = []
    rt.subscribe(lambda e: finished.append(e) if isinstance(e, ToolCallFinished) else None)
    task = asyncio.create_task(rt.call("Broken", {"how": "stubborn"}))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished and "interrupted" in finished[0].call.text


async def test_spill_through_the_runtime_keeps_both_ends_and_the_full_file(
    make_runtime: Any, workspace: Path
) -> None:
    rt: Runtime = await make_runtime(tools=ALL, config={"output": {"max_chars": 1000}})
    result = await rt.call("Big", {"chars": 5000})
    assert result.truncated
    path = Path(result.text.split("output_path: ")[1].split("\n")[0])
    body = path.read_text()
    assert len(body) == 5000 and body.startswith("line 0000000")
    assert rt.workspace.contains(path)
    assert "line 0000000" in result.text and body[-20:] in result.text
    exempt = await rt.call("Big", {"chars": 5000, "exempt": True})
    assert len(exempt.text) == 5000 and not exempt.truncated


async def test_host_tools_run_through_the_callback(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(builtins=False)
    calls: list[dict[str, Any]] = []

    async def handler(args: dict[str, Any], ctx: Any) -> str:
        calls.append(args)
        return f"host says {args['q']}"

    rt.register_host_tool(
        "lookup",
        "Look something up in the host.",
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler,
    )
    ok = await rt.call("lookup", {"q": "x", "extra": 1})
    bad = await rt.call("lookup", {"q": 3})
    assert ok.text == "host says x" and calls == [{"q": "x", "extra": 1}]
    assert bad.is_error and 'Invalid arguments for tool "lookup"' in bad.text
    assert [t.source for t in rt.tools() if t.name == "lookup"] == ["user"]


async def test_calls_accept_toolcall_objects_and_generate_ids(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=ALL)
    a, b = await rt.run_batch(
        [ToolCall("mine", "Echo", '{"text":"a"}'), {"name": "Echo", "arguments": {"text": "b"}}]
    )
    assert a.tool_call_id == "mine" and b.tool_call_id.startswith("call_")
