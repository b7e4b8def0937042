"""Whose call it is: the executor's identity, in the batch's turn, is on every event, on
every `ToolContext` and on the hooks' contexts; what before-hooks hand over reaches
`execute` typed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deftly.contract import ToolContext, ToolResult
from deftly.contract.identity import Identity
from deftly.execution import (
    AfterContext,
    Allow,
    BatchStarted,
    BeforeContext,
    Event,
    Outcome,
    Proceed,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
)
from deftly.execution.events import NO_AGENT, RuntimeNotice, session_wide
from tests.execution.tools import WorkTool, calls, executor, reporting

CHILD = Identity("s-1", "child-1")


async def test_a_batch_stamps_the_identity_in_its_turn_on_events_and_contexts(
    tmp_path: Path,
) -> None:
    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)), identity=CHILD)
    events: list[Event] = []
    run.events.subscribe(events.append)
    seen_by_hooks: list[Identity] = []

    async def before(ctx: BeforeContext) -> None:
        seen_by_hooks.append(ctx.identity)

    async def after(ctx: AfterContext) -> None:
        seen_by_hooks.append(ctx.identity)

    run.before.add("before", before)
    run.after.add("after", after)

    work, missing = await run.run_batch(calls("Work", "Missing"), turn_id="turn-7")

    in_turn = Identity("s-1", "child-1", "turn-7")
    assert work.text == "ok" and missing.outcome is Outcome.PREFLIGHT_REJECTED
    assert [ctx.identity for ctx in contexts] == [in_turn]
    kinds = {type(event) for event in events}
    assert kinds == {BatchStarted, ToolCallStarted, ToolProgress, ToolCallFinished}
    assert len(events) == 6  # the batch; Work: started, progress, finished; Missing: 2
    assert all(event.identity == in_turn for event in events)
    assert seen_by_hooks == [in_turn, in_turn, in_turn]  # before Work; after each call


async def test_without_a_turn_the_executors_own_identity_is_used(tmp_path: Path) -> None:
    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)), identity=CHILD)
    events: list[Event] = []
    run.events.subscribe(events.append)
    await run.run_batch(calls("Work"), turn_id="turn-1")
    await run.run_batch(calls("Work"))
    assert [ctx.identity.turn_id for ctx in contexts] == ["turn-1", None]
    assert [e.identity.turn_id for e in events if isinstance(e, ToolCallFinished)] == [
        "turn-1",
        None,
    ]
    assert run.identity == CHILD  # a batch's turn does not stick


async def test_the_default_identity_is_the_main_agent_of_no_session(tmp_path: Path) -> None:
    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)))
    await run.run_batch(calls("Work"))
    assert contexts[0].identity == Identity("", "main", None)


def test_a_session_wide_notice_names_the_session_and_no_agent() -> None:
    notice = RuntimeNotice("mcp_server", "server x exited", identity=session_wide("s-1"))
    assert notice.identity == Identity("s-1", NO_AGENT, None)
    assert RuntimeNotice("x", "y").identity == Identity()


@dataclass(frozen=True)
class Review:
    reviewed: bool


@dataclass(frozen=True)
class Ticket:
    number: int


async def test_what_before_hooks_hand_over_reaches_execute_by_type(tmp_path: Path) -> None:
    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)))

    async def review(ctx: BeforeContext) -> Any:
        return Proceed(Review(reviewed=True))

    async def second_review(ctx: BeforeContext) -> Any:
        return Proceed(Review(reviewed=False))  # the first of a type wins

    async def ticket(ctx: BeforeContext) -> Any:
        return Allow(Ticket(42))

    async def never(ctx: BeforeContext) -> Any:
        raise AssertionError("Allow ends the chain")

    run.before.add("review", review, order=1)
    run.before.add("second", second_review, order=2)
    run.before.add("ticket", ticket, order=3)
    run.before.add("never", never, order=4)
    [result] = await run.run_batch(calls("Work"))
    assert result.text == "ok"
    ctx = contexts[0]
    assert ctx.handoff(Review) == Review(reviewed=True)
    assert ctx.handoff(Ticket) == Ticket(42)
    assert ctx.handoff(str) is None
    assert ctx.handoffs == (Review(True), Review(False), Ticket(42))


async def test_a_call_with_no_handoff_gets_none(tmp_path: Path) -> None:
    def work(ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(repr(ctx.handoff(Review)))

    run = executor(tmp_path, WorkTool("Work", work))
    [result] = await run.run_batch(calls("Work"))
    assert result.text == "None"


async def test_the_permission_gates_notice_names_the_call_it_decided(tmp_path: Path) -> None:
    from deftly.execution.permission_gate import PermissionGate
    from deftly.policy import Workspace
    from deftly.policy.permissions.engine import PermissionEngine

    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)), identity=CHILD)
    engine = PermissionEngine(Workspace(tmp_path), mode="manual")
    PermissionGate(engine, run.events, approve_asks=True).install(run.before)
    notices: list[RuntimeNotice] = []
    run.events.subscribe(lambda e: notices.append(e) if isinstance(e, RuntimeNotice) else None)
    [result] = await run.run_batch(calls("Work"), turn_id="turn-2")
    assert result.text == "ok"
    assert [n.kind for n in notices] == ["permission"]
    assert notices[0].identity == Identity("s-1", "child-1", "turn-2")


async def test_a_failing_external_hooks_notice_names_the_call(tmp_path: Path) -> None:
    from deftly.execution.external_hooks import CommandHook, ExternalHooks

    contexts: list[ToolContext] = []
    run = executor(tmp_path, WorkTool("Work", reporting(contexts)), identity=CHILD)
    hooks = ExternalHooks(
        [CommandHook("PreToolUse", "exit 1"), CommandHook("PostToolUse", "exit 1")],
        workspace=tmp_path,
        session_id="s-1",
        events=run.events,
    )
    hooks.install(run.before, run.after)
    notices: list[RuntimeNotice] = []
    run.events.subscribe(lambda e: notices.append(e) if isinstance(e, RuntimeNotice) else None)
    [result] = await run.run_batch(calls("Work"), turn_id="turn-3")
    assert result.text == "ok"  # a failing hook does not block
    assert len(notices) == 2
    assert {n.identity for n in notices} == {Identity("s-1", "child-1", "turn-3")}
