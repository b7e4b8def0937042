"""Plan mode: EnterPlanMode, the guard, and ExitPlanMode's review."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Outcome, Runtime, ToolTraits
from deftly.contract.display import PlanReviewDisplay
from deftly.features.plan.mode import PlanMode
from deftly.policy import ApprovalRequest, ApprovalResponse
from tests.helpers import NamedTool, PeekTool, ScribbleTool, WriteTool


class Reviewer:
    """An in-process approver standing in for the person who reviews the plan."""

    def __init__(self, *answers: ApprovalResponse) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        return self.answers.pop(0)


PLAN = "# Plan\n\n1. Change src/app.py\n2. Run the tests\n"


@pytest.fixture
def ws(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


async def runtime(make_runtime: Any, **kwargs: Any) -> Runtime:
    kwargs.setdefault("approve_asks", False)
    rt: Runtime = await make_runtime(
        tools=[
            WriteTool,
            PeekTool,
            ScribbleTool,
            NamedTool("Edit", traits=ToolTraits(writes_files=True)),
            NamedTool("TaskStop", traits=ToolTraits(stops_tasks=True)),
            NamedTool("CronCreate", traits=ToolTraits(schedules_work=True)),
            NamedTool("CronDelete", traits=ToolTraits(schedules_work=True)),
            NamedTool("CronList", read_only=True),
        ],
        **kwargs,
    )
    return rt


async def enter_and_write_plan(rt: Runtime, plan: str = PLAN) -> Path:
    entered = await rt.call("EnterPlanMode", {})
    assert not entered.is_error, entered.text
    path = rt.service(PlanMode).plan_path
    assert path is not None and str(path) in entered.text
    wrote = await rt.call("Write", {"path": str(path), "content": plan})
    assert not wrote.is_error, wrote.text
    return path


async def test_entering_needs_no_approval_and_names_the_plan_file(
    make_runtime: Any, ws: Path
) -> None:
    rt = await runtime(make_runtime)
    result = await rt.call("EnterPlanMode", {})
    assert not result.is_error and rt.service(PlanMode).active
    path = rt.service(PlanMode).plan_path
    assert path is not None and path.parent.is_dir() and not path.exists()
    assert path.parent == rt.session_dir / "plans"
    again = await rt.call("EnterPlanMode", {})
    assert "already on" in again.text and rt.service(PlanMode).plan_path == path


async def test_the_guard_allows_only_the_plan_file(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    path = await enter_and_write_plan(rt)
    assert path.read_text() == PLAN, "the plan file is written without asking anyone"
    other = await rt.call("Write", {"path": "src/app.py", "content": "x"})
    assert other.is_error and other.outcome is Outcome.VETOED
    assert "Plan mode is on" in other.text and str(path) in other.text
    assert not (ws / "src/app.py").exists()
    edit = await rt.call("Edit", {"text": "no paths declared"})
    assert edit.is_error and "Plan mode is on" in edit.text
    for name in ("TaskStop", "CronCreate", "CronDelete"):
        blocked = await rt.call(name, {"text": "x"})
        assert blocked.is_error and "not available in plan mode" in blocked.text, name
    assert not (await rt.call("CronList", {"text": "x"})).is_error
    assert not (await rt.call("Peek", {"path": str(path)})).is_error


async def test_other_tools_follow_the_normal_permissions(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    await enter_and_write_plan(rt)
    other = await rt.call("Scribble", {"path": "notes.txt", "content": "x"})
    assert other.is_error and "needs approval" in other.text, "asked, not refused by plan mode"


async def test_a_deny_rule_still_wins_over_plan_mode(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime, config={"permissions": {"deny": ["Write"]}})
    await rt.call("EnterPlanMode", {})
    assert rt.service(PlanMode).plan_path is not None
    result = await rt.call("Write", {"path": str(rt.service(PlanMode).plan_path), "content": PLAN})
    assert result.is_error and "denied by the permission rule" in result.text


async def test_exit_shows_the_plan_and_leaves_plan_mode_when_approved(
    make_runtime: Any, ws: Path
) -> None:
    reviewer = Reviewer(ApprovalResponse("approve"))
    rt = await runtime(make_runtime, approver=reviewer)
    path = await enter_and_write_plan(rt)
    result = await rt.call("ExitPlanMode", {})
    assert not result.is_error, result.text
    [request] = reviewer.requests
    assert isinstance(request.display, PlanReviewDisplay)
    assert request.display.plan == PLAN and request.display.path == str(path)
    assert request.display.kind == "plan_review"
    assert not rt.service(PlanMode).active
    assert "The user approved the plan" in result.text and "## Approved plan" in result.text
    assert PLAN in result.text
    after = await rt.call("Write", {"path": "src/app.py", "content": "x"})
    assert not after.is_error and (ws / "src/app.py").read_text() == "x"


async def test_a_picked_option_is_passed_on(make_runtime: Any, ws: Path) -> None:
    reviewer = Reviewer(ApprovalResponse("approve", selected="Small patch"))
    rt = await runtime(make_runtime, approver=reviewer)
    await enter_and_write_plan(rt)
    options = [
        {"label": "Small patch", "description": "Fix the one function."},
        {"label": "Rewrite", "description": "Replace the module."},
    ]
    result = await rt.call("ExitPlanMode", {"options": options})
    display = reviewer.requests[0].display
    assert isinstance(display, PlanReviewDisplay) and display.options is not None
    assert [o.label for o in display.options] == ["Small patch", "Rewrite"]
    assert "Selected approach: Small patch" in result.text


async def test_feedback_keeps_plan_mode_on(make_runtime: Any, ws: Path) -> None:
    reviewer = Reviewer(
        ApprovalResponse("reject", feedback="also update the docs"), ApprovalResponse("reject")
    )
    rt = await runtime(make_runtime, approver=reviewer)
    await enter_and_write_plan(rt)
    revise = await rt.call("ExitPlanMode", {})
    assert not revise.is_error and "also update the docs" in revise.text
    assert rt.service(PlanMode).active
    rejected = await rt.call("ExitPlanMode", {})
    assert rejected.is_error and rejected.result.stop_turn
    assert "rejected the plan" in rejected.text and rt.service(PlanMode).active


@pytest.mark.parametrize(
    "settings", [{"mode": "auto"}, {"approve_asks": True}], ids=["auto", "approve-asks"]
)
async def test_without_review_the_model_is_told_so(
    make_runtime: Any, ws: Path, settings: dict[str, Any]
) -> None:
    reviewer = Reviewer()
    rt = await runtime(make_runtime, approver=reviewer, **settings)
    await enter_and_write_plan(rt)
    result = await rt.call("ExitPlanMode", {})
    assert not result.is_error and not rt.service(PlanMode).active
    assert "NOT reviewed" in result.text and reviewer.requests == []


async def test_nobody_to_review_keeps_plan_mode_on(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    await enter_and_write_plan(rt)
    result = await rt.call("ExitPlanMode", {})
    assert result.is_error and "--yes" in result.text and "--mode auto" in result.text
    assert "plan mode is still on" in result.text and "allow = [" not in result.text
    assert rt.service(PlanMode).active


async def test_exit_needs_plan_mode_and_a_plan(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime, approve_asks=True)
    off = await rt.call("ExitPlanMode", {})
    assert off.is_error and "plan mode is off" in off.text
    await rt.call("EnterPlanMode", {})
    empty = await rt.call("ExitPlanMode", {})
    assert empty.is_error and "empty or missing" in empty.text and rt.service(PlanMode).active
    await rt.call("Write", {"path": str(rt.service(PlanMode).plan_path), "content": PLAN})
    same = [{"label": "A"}, {"label": " a "}]
    dup = await rt.call("ExitPlanMode", {"options": same})
    assert dup.is_error and "same label" in dup.text
    many = await rt.call("ExitPlanMode", {"options": [{"label": str(i)} for i in range(4)]})
    assert many.is_error and many.outcome is Outcome.PREFLIGHT_REJECTED
