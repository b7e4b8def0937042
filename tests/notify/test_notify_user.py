"""NotifyUser through a real `Agent` against the scripted model server: the notice event
with the agent's identity, the result naming the channels that took it, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.contract.identity import MAIN_AGENT
from deftly.execution.events import Event, RuntimeNotice
from deftly.features.notify import NOTICE_KIND, Notification, NotifyAlerts
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer


def _notices(events: list[Event]) -> list[RuntimeNotice]:
    return [e for e in events if isinstance(e, RuntimeNotice) and e.kind == NOTICE_KIND]


async def test_the_model_notifies_and_the_next_request_says_where_it_went(
    make_runtime: Any, workspace: Path
) -> None:
    runtime = await make_runtime()
    seen: list[Event] = []
    runtime.subscribe(seen.append)
    runtime.subscribe(NotifyAlerts(shown="a line on the test's screen"))
    args = {"message": "The build finished.", "title": "  deftly\n build ", "urgency": "low"}
    script = [calls(Call("NotifyUser", args)), say("Told you.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "build it and tell me")
        await agent.aclose()
    [notice] = _notices(seen)
    assert notice.identity.agent_id == MAIN_AGENT
    assert notice.identity.session_id == agent.session_id
    note = notice.data
    assert isinstance(note, Notification)
    assert (note.message, note.title) == ("The build finished.", "deftly build")
    assert note.urgency == "low"
    assert notice.message == "deftly build: The build finished."
    assert [(n.kind, n.text) for n in turn.of(ev.Notice) if n.kind == NOTICE_KIND] == [
        ("notify", "deftly build: The build finished.")
    ]
    [result] = tool_messages(server.requests[1])
    told = content_text(result)
    assert "The person was notified: a line on the test's screen." in told
    assert "bell" not in told  # low urgency is shown only
    assert turn.end.stop_reason == "end_turn"


async def test_with_nobody_showing_it_the_result_says_the_person_may_not_have_seen_it(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    result = await runtime.call("NotifyUser", {"message": "Done."})
    assert not result.is_error
    assert "may not have seen it" in result.text
    assert "say it in your reply" in result.text


async def test_it_is_never_asked_about_in_manual_mode(make_runtime: Any) -> None:
    asked: list[ApprovalRequest] = []

    class Recorder:
        async def request(self, request: ApprovalRequest) -> ApprovalResponse:
            asked.append(request)
            return ApprovalResponse("reject")

    runtime = await make_runtime(mode="manual", approve_asks=False, approver=Recorder())
    result = await runtime.call("NotifyUser", {"message": "Halfway there.", "urgency": "high"})
    assert not result.is_error, result.text
    assert asked == []


async def test_a_blank_or_long_message_and_an_unknown_urgency_are_refused(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    seen: list[Event] = []
    runtime.subscribe(seen.append)
    blank = await runtime.call("NotifyUser", {"message": "   \n"})
    assert blank.is_error and "blank" in blank.text
    long = await runtime.call("NotifyUser", {"message": "x" * 501})
    assert long.is_error and "500" in long.text
    loud = await runtime.call("NotifyUser", {"message": "hi", "urgency": "urgent"})
    assert loud.is_error and "urgency" in loud.text
    assert _notices(seen) == []


async def test_the_description_states_the_limit_and_the_schema_the_urgencies(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    [tool] = [t for t in runtime.tools() if t.name == "NotifyUser"]
    assert "at most 500 characters" in tool.description
    schema = tool.parameters
    assert schema["required"] == ["message"]
    assert schema["properties"]["urgency"]["enum"] == ["low", "normal", "high"]
    assert schema["properties"]["message"]["maxLength"] == 500


async def test_plan_mode_lets_it_run_and_a_deny_rule_still_stops_it(make_runtime: Any) -> None:
    runtime = await make_runtime()
    entered = await runtime.call("EnterPlanMode", {})
    assert not entered.is_error, entered.text
    planning = await runtime.call("NotifyUser", {"message": "The plan is ready for review."})
    assert not planning.is_error, planning.text
    denied = await make_runtime(config={"permissions": {"deny": ["NotifyUser"]}})
    refused = await denied.call("NotifyUser", {"message": "hello"})
    assert refused.is_error and "denied by the permission rule" in refused.text, refused.text
