"""Agent scopes: a child agent is a new agent scope in the same session.

It shares the session scope (the MCP connections, the background tasks, the permission
engine with its mode, rules and session approvals), never has a tool or a permission its
parent lacks, and its events carry its own agent_id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Runtime, ToolCall
from deftly.execution.events import Event, ToolCallStarted
from deftly.features.mcp.manager import McpManager
from deftly.features.plan.mode import PlanMode
from deftly.features.shell.tasks import BackgroundTasks
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from deftly.registry.activation import Profile
from deftly.runtime import AgentRuntime
from tests.mcp.conftest import fake


class SessionApprover:
    """Answers every ask with "yes, for this session", and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked.append(request)
        return ApprovalResponse("approve_session")


async def call(agent: AgentRuntime, name: str, arguments: dict[str, Any]) -> Any:
    [result] = await agent.run_batch([ToolCall(f"{agent.agent_id}-{name}", name, arguments)])
    return result


async def test_a_child_shares_the_parents_mcp_connection(workspace: Path, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    config = {"mcp": {"servers": {"fake": fake("--calls-file", str(calls))}}}
    async with Runtime(workspace, config=config, plugins=False, approve_asks=True) as rt:
        parent_pid = (await rt.call("mcp__fake__pid", {})).text
        child = await rt.agent.spawn_child("helper")
        assert "mcp__fake__echo" in child.registry
        child_pid = (await call(child, "mcp__fake__pid", {})).text
        assert child_pid == parent_pid  # one server process, not two
        manager = rt.service(McpManager)
        assert child.services.get(McpManager) is manager
        [status] = manager.statuses()
        assert (status.state, status.restarts) == ("connected", 0)
        assert calls.read_text().split() == ["pid", "pid"]
        # The rest of the session scope is shared too; the agent's own state is not.
        assert child.services.get(BackgroundTasks) is rt.service(BackgroundTasks)
        assert child.services.get(PlanMode) is not rt.service(PlanMode)


async def test_a_session_approval_in_the_parent_holds_in_the_child(workspace: Path) -> None:
    approver = SessionApprover()
    async with Runtime(workspace, plugins=False, approver=approver) as rt:
        parent = await rt.call("Bash", {"command": "printf parent"})
        assert (parent.is_error, parent.text) == (False, "parent")
        assert [a.approval_rule for a in approver.asked] == ["Bash(printf parent)"]
        child = await rt.agent.spawn_child("helper")
        again = await call(child, "Bash", {"command": "printf parent"})
        assert (again.is_error, again.text) == (False, "parent")
        assert len(approver.asked) == 1  # approved for the session: nobody asked again
        other = await call(child, "Bash", {"command": "printf child"})
        assert not other.is_error and len(approver.asked) == 2  # a new command still asks
        # The child's session approval is the session's: the parent has it too.
        assert "Bash(printf child)" in rt.permissions.session.rules


async def test_a_child_is_refused_what_its_parents_rules_deny(workspace: Path) -> None:
    (workspace / "keep").write_text("x")
    config = {"permissions": {"deny": ["Bash(rm *)"]}}
    async with Runtime(workspace, config=config, plugins=False, mode="yolo") as rt:
        child = await rt.agent.spawn_child("helper")
        refused = await call(child, "Bash", {"command": "rm keep"})
        assert refused.is_error and "Bash(rm *)" in refused.text
        assert (workspace / "keep").exists()
        # The same mode: yolo in the parent is yolo in the child, and a switch is shared.
        assert not (await call(child, "Bash", {"command": "printf ok"})).is_error
        rt.set_mode("manual")
        asked = await call(child, "Bash", {"command": "printf asked"})
        assert asked.is_error and asked.text != "asked"  # manual, and nobody to ask


async def test_a_childs_profile_cannot_add_a_tool_its_parent_lacks(workspace: Path) -> None:
    profile = Profile(tools=("Read", "Grep", "Glob"))
    async with Runtime(workspace, profile=profile, plugins=False, approve_asks=True) as rt:
        child = await rt.agent.spawn_child("helper", Profile(tools=("Read", "Bash", "Write")))
        assert sorted(child.registry.names()) == ["Read"]
        assert not child.is_switched_on("Bash", "builtin")
        refused = await call(child, "Bash", {"command": "printf no"})
        assert refused.is_error and refused.text != "no"
        (workspace / "a.txt").write_text("hello\n")
        read = await call(child, "Read", {"path": "a.txt"})
        assert not read.is_error and "hello" in read.text
        # A grandchild is held to its parent's (the child's) set, not the root's.
        grandchild = await child.spawn_child("grand", Profile(tools=("Grep", "Read")))
        assert sorted(grandchild.registry.names()) == ["Read"]


async def test_a_child_narrows_what_a_parent_switched_off(workspace: Path) -> None:
    profile = Profile(disallowed_tools=("Write",))
    async with Runtime(workspace, profile=profile, plugins=False, approve_asks=True) as rt:
        child = await rt.agent.spawn_child("helper", Profile(disallowed_tools=("Edit",)))
        names = set(child.registry.names())
        assert "Write" not in names and "Edit" not in names and "Read" in names
        result = await call(child, "Write", {"path": "w.txt", "content": "x"})
        assert result.is_error and not (workspace / "w.txt").exists()


async def test_a_childs_events_carry_its_agent_id(workspace: Path) -> None:
    events: list[Event] = []
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        rt.subscribe(events.append)
        (workspace / "a.txt").write_text("hello\n")
        await rt.call("Read", {"path": "a.txt"}, call_id="p1")
        child = await rt.agent.spawn_child("helper")
        await call(child, "Read", {"path": "a.txt"})
    started = {e.call_id: e.identity for e in events if isinstance(e, ToolCallStarted)}
    assert started["p1"].agent_id == "main"
    assert started["helper-Read"].agent_id == "helper"
    assert started["helper-Read"].session_id == started["p1"].session_id == rt.session_id


async def test_children_close_with_their_parent(workspace: Path) -> None:
    rt = Runtime(workspace, plugins=False, approve_asks=True)
    await rt.start()
    child = await rt.agent.spawn_child("helper")
    assert child.started
    await rt.close()
    assert not child.started and "Read" not in child.registry


async def test_plan_mode_is_each_agents_own(workspace: Path) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        child = await rt.agent.spawn_child("planner")
        entered = await call(child, "EnterPlanMode", {})
        assert not entered.is_error, entered.text
        refused = await call(child, "Write", {"path": "c.txt", "content": "x"})
        assert refused.is_error and "Plan mode is on" in refused.text
        written = await rt.call("Write", {"path": "p.txt", "content": "x"})
        assert not written.is_error, written.text  # the parent is not planning
        assert (workspace / "p.txt").exists() and not (workspace / "c.txt").exists()
        assert child.services.get(PlanMode).plan_path != rt.service(PlanMode).plan_path
