"""What a session keeps in its state store comes back when it is resumed
(`Runtime(session_id=<old id>)`): plan mode, session approvals, loaded deferred tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.features import disclosure
from deftly.features.disclosure.disclosure import DeferredTools
from deftly.features.plan.mode import PlanMode
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.helpers import EchoTool


class SessionApprover:
    """Says "yes, for this session" to every ask, counting them."""

    def __init__(self) -> None:
        self.asked = 0

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked += 1
        return ApprovalResponse("approve_session")


async def test_plan_mode_is_still_on_in_a_resumed_session(workspace: Path) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        entered = await rt.call("EnterPlanMode", {})
        assert not entered.is_error, entered.text
        plan = rt.service(PlanMode).plan_path
        assert plan is not None
        session_id = rt.session_id
    async with Runtime(workspace, plugins=False, session_id=session_id) as rt:
        state = rt.service(PlanMode)
        assert state.active and state.plan_path == plan
        refused = await rt.call("Write", {"path": "other.txt", "content": "x"})
        assert refused.is_error and "Plan mode is on" in refused.text
        assert not (workspace / "other.txt").exists()
    async with Runtime(workspace, plugins=False) as fresh:
        assert not fresh.service(PlanMode).active  # another session: not planning


async def test_a_new_plan_after_a_resume_gets_a_new_file(workspace: Path) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        await rt.call("EnterPlanMode", {})
        first = rt.service(PlanMode).plan_path
        rt.service(PlanMode).exit()
        session_id = rt.session_id
    async with Runtime(workspace, plugins=False, session_id=session_id) as rt:
        plan_mode = rt.service(PlanMode)
        assert not plan_mode.active
        assert plan_mode.enter() != first


async def test_session_approvals_come_back_with_the_session(workspace: Path) -> None:
    approver = SessionApprover()
    async with Runtime(workspace, plugins=False, approver=approver) as rt:
        assert (await rt.call("Bash", {"command": "printf one"})).text == "one"
        session_id = rt.session_id
    assert approver.asked == 1
    async with Runtime(workspace, plugins=False, approver=approver, session_id=session_id) as rt:
        assert "Bash(printf one)" in rt.permissions.session.rules
        assert (await rt.call("Bash", {"command": "printf one"})).text == "one"
        assert approver.asked == 1  # remembered: not asked again
    async with Runtime(workspace, plugins=False, approver=approver) as fresh:
        assert fresh.permissions.session.rules == []


def deferred_runtime(workspace: Path, **extra: Any) -> Runtime:
    rt = Runtime(
        workspace,
        config={"mcp": {"select_tools": True}},
        tools=[EchoTool, *disclosure.CONTRIBUTIONS],
        builtins=False,
        plugins=False,
        approve_asks=True,
        **extra,
    )
    return rt


def notes(args: dict[str, Any], ctx: Any) -> str:
    return f"noted {args.get('text')}"


async def test_loaded_deferred_tools_stay_loaded_in_a_resumed_session(workspace: Path) -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    async with deferred_runtime(workspace) as rt:
        rt.register_host_tool("Notes", "Take a note.", schema, notes, disclosure="deferred")
        assert "Notes" not in [t.name for t in rt.model_tools().tools]
        loaded = await rt.call("select_tools", {"names": ["Notes"]})
        assert not loaded.is_error, loaded.text
        assert "Notes" in [t.name for t in rt.model_tools().tools]
        session_id = rt.session_id
    async with deferred_runtime(workspace, session_id=session_id) as rt:
        rt.register_host_tool("Notes", "Take a note.", schema, notes, disclosure="deferred")
        assert rt.service(DeferredTools).loaded == {"Notes"}
        assert "Notes" in [t.name for t in rt.model_tools().tools]
        assert (await rt.call("Notes", {"text": "x"})).text == "noted x"
    async with deferred_runtime(workspace) as fresh:
        fresh.register_host_tool("Notes", "Take a note.", schema, notes, disclosure="deferred")
        assert (await fresh.call("Notes", {"text": "x"})).is_error  # not loaded here
