"""Where AskUserQuestion is offered: only where someone answers and not in auto mode (by its
`asks_user` trait), and where it runs without asking anyone's permission first."""

from __future__ import annotations

from typing import Any

from deftly.policy import ApprovalRequest, ApprovalResponse
from tests.ask.helpers import DB, TOOL, Recorder, answers_of, ask


def names(runtime: Any) -> set[str]:
    return {t.name for t in runtime.tools()}


async def test_without_an_answerer_it_is_not_offered_and_a_call_is_refused(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    assert runtime.answerer is None
    assert TOOL not in names(runtime)
    assert TOOL not in {t.name for t in runtime.model_tools().tools}
    called = await runtime.call(TOOL, ask(DB))
    assert called.is_error
    assert "nobody can answer questions here" in called.result.text


async def test_it_comes_and_goes_with_the_answerer(make_runtime: Any) -> None:
    runtime = await make_runtime()
    recorder = Recorder(lambda request: {"Which DB?": "SQLite"})
    runtime.answerer = recorder
    assert TOOL in names(runtime)
    called = await runtime.call(TOOL, ask(DB))
    assert answers_of(called.result.text) == {"answers": {"Which DB?": "SQLite"}}
    runtime.answerer = None
    assert TOOL not in names(runtime)
    assert len(recorder.requests) == 1


async def test_auto_mode_hides_it_and_it_is_back_when_the_mode_changes(
    make_runtime: Any,
) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres"})
    runtime = await make_runtime(answerer=recorder, mode="auto")
    assert TOOL not in names(runtime)
    refused = await runtime.call(TOOL, ask(DB))
    assert refused.is_error and "auto mode asks no one" in refused.result.text
    assert recorder.requests == []
    runtime.set_mode("manual")
    assert TOOL in names(runtime)
    called = await runtime.call(TOOL, ask(DB))
    assert not called.is_error, called.result.text
    runtime.set_mode("auto")
    assert TOOL not in names(runtime)


async def test_manual_mode_asks_no_approval_to_ask_a_question(make_runtime: Any) -> None:
    approvals: list[ApprovalRequest] = []

    class Approvals:
        async def request(self, request: ApprovalRequest) -> ApprovalResponse:
            approvals.append(request)
            return ApprovalResponse("reject")

    runtime = await make_runtime(
        mode="manual",
        approve_asks=False,
        approver=Approvals(),
        answerer=Recorder(lambda request: {"Which DB?": "SQLite"}),
    )
    called = await runtime.call(TOOL, ask(DB))
    assert not called.is_error, called.result.text
    assert approvals == []


async def test_plan_mode_lets_it_run_and_a_deny_rule_still_stops_it(make_runtime: Any) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "SQLite"})
    runtime = await make_runtime(answerer=recorder, approve_asks=False)
    entered = await runtime.call("EnterPlanMode", {})
    assert not entered.is_error, entered.result.text
    planning = await runtime.call(TOOL, ask(DB))
    assert not planning.is_error, planning.result.text
    assert answers_of(planning.result.text) == {"answers": {"Which DB?": "SQLite"}}
    denied = await make_runtime(answerer=recorder, config={"permissions": {"deny": [TOOL]}})
    refused = await denied.call(TOOL, ask(DB))
    assert refused.is_error and "denied by the permission rule" in refused.result.text
    assert len(recorder.requests) == 1
