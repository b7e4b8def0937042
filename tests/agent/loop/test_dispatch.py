"""Streaming dispatch: a call runs while the model is still streaming the rest."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from deftly.agent import Agent, AgentEvent
from deftly.agent import events as ev
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, Reply, Say, calls, say
from tests.scripted.server import ModelServer


async def test_a_complete_call_finishes_before_the_stream_ends(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    runtime = await make_runtime()
    gate = threading.Event()
    finished_while_streaming: list[bool] = []

    def watch(event: AgentEvent) -> None:
        if isinstance(event, ev.ToolResult) and event.name == "Read":
            finished_while_streaming.append(not gate.is_set())
            gate.set()  # only now may the model finish its reply

    reply = Reply(
        (
            Call("Read", {"path": str(workspace / "a.txt")}),
            Call("Write", {"path": str(workspace / "big.txt"), "content": "x" * 5000}),
        ),
        chunk=500,
        gate=gate,
    )
    with ModelServer([reply, say("done")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go", on_event=watch)
        await agent.aclose()
    assert finished_while_streaming == [True]
    assert (workspace / "big.txt").read_text() == "x" * 5000
    assert turn.end.stop_reason == "end_turn"


async def test_identical_calls_in_one_step_run_once_and_share_the_result(
    make_runtime: Any, workspace: Path
) -> None:
    log = workspace / "runs.log"
    runtime = await make_runtime()
    same = {"command": f"echo once >> {log}"}
    script = [calls(Call("Bash", same), Call("Bash", dict(same))), say("ok")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert log.read_text() == "once\n"
    results = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in results] == ["call_0_0", "call_0_1"]
    assert content_text(results[0]) == content_text(results[1])
    assert len(turn.of(ev.ToolResult)) == 2


async def test_text_before_calls_is_one_text_event(make_runtime: Any) -> None:
    runtime = await make_runtime()
    script = [Reply((Say("Let me look."), Call("Glob", {"pattern": "*"}))), say("Nothing.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert [e.text for e in turn.of(ev.Text)] == ["Let me look.", "Nothing."]
    kinds = [type(e).__name__ for e in turn.events if not isinstance(e, ev.TextDelta)]
    assert kinds.index("Text") < kinds.index("ToolCall") < kinds.index("ToolResult")


async def test_approvals_are_asked_as_calls_complete_while_the_reply_streams(
    make_runtime: Any, workspace: Path
) -> None:
    gate = threading.Event()
    asked: list[tuple[str, bool]] = []

    class Person:
        async def request(self, request: ApprovalRequest) -> ApprovalResponse:
            asked.append((request.tool, not gate.is_set()))
            gate.set()  # the model may finish its reply only once the first ask was made
            return ApprovalResponse("approve")

    runtime = await make_runtime(approve_asks=False, approver=Person())
    reply = Reply(
        (
            Call("Bash", {"command": "echo hi"}),
            Call("Write", {"path": str(workspace / "late.txt"), "content": "y" * 4000}),
        ),
        chunk=400,
        gate=gate,
    )
    with ModelServer([reply, say("done")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert asked[0] == ("Bash", True)
    assert turn.end.stop_reason == "end_turn"
    assert (workspace / "late.txt").read_text() == "y" * 4000
    assert "hi" in content_text(tool_messages(server.requests[1])[0])
