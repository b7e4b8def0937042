"""Permissions never widen: a child has its type's tools within its parent's, the
parent's rules, mode and approver, and delegates only as deep as `[agents] max_depth`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deftly.agent import Agent
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.agent.loop.helpers import openai_provider, run_turn
from tests.agents.helpers import Router, agent_call, features, last_tool_result, tool_results
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


async def test_an_explore_child_is_refused_a_write(make_runtime: Any, workspace: Path) -> None:
    router = Router(
        parent=[calls(agent_call("MARK-W: write x.txt", subagent_type="explore")), say("ok")],
        children={
            "MARK-W": [
                calls(Call("Write", {"path": "x.txt", "content": "hi"})),
                say("I could not write."),
            ]
        },
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "delegate a write")
        await agent.aclose()
    refusal = last_tool_result(router.seen["MARK-W"][1])
    assert "ERROR" in refusal and "Write" in refusal
    assert not (workspace / "x.txt").exists()
    assert "Write" not in tool_names(router.seen["MARK-W"][0])
    assert "I could not write." in last_tool_result(router.seen["parent"][1])


async def test_a_child_is_denied_what_the_parents_rules_deny(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "secret.txt").write_text("hunter2\n")
    router = Router(
        parent=[calls(agent_call("MARK-D: read secret.txt")), say("ok")],
        children={"MARK-D": [calls(Call("Read", {"path": "secret.txt"})), say("It was denied.")]},
    )
    config = {"permissions": {"deny": ["Read(secret.txt)"]}}
    runtime = await make_runtime(features=features(), config=config)
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "delegate a read")
        await agent.aclose()
    denied = last_tool_result(router.seen["MARK-D"][1])
    assert "hunter2" not in denied
    assert 'Tool "Read" was denied by the permission rule "Read(secret.txt)"' in denied


class RecordingApprover:
    """The one person: approves, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked.append(request)
        return ApprovalResponse("approve")


async def test_a_childs_ask_reaches_the_parents_approver_in_the_same_mode(
    make_runtime: Any, workspace: Path
) -> None:
    approver = RecordingApprover()
    router = Router(
        parent=[calls(agent_call("MARK-A: make out.txt")), say("ok")],
        children={
            "MARK-A": [
                calls(Call("Bash", {"command": "echo made > out.txt"})),
                say("Made it."),
            ]
        },
    )
    runtime = await make_runtime(
        features=features(), mode="manual", approve_asks=False, approver=approver
    )
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "delegate a command")
        await agent.aclose()
    assert [r.tool for r in approver.asked] == ["Bash"]  # the Agent call itself is not asked
    assert (workspace / "out.txt").read_text() == "made\n"


async def test_a_child_of_a_planning_agent_plans_too(make_runtime: Any, workspace: Path) -> None:
    router = Router(
        parent=[
            calls(Call("EnterPlanMode", {})),
            calls(agent_call("MARK-P: write notes.txt")),
            say("ok"),
        ],
        children={
            "MARK-P": [
                calls(Call("Write", {"path": "notes.txt", "content": "x"})),
                say("Plan mode stopped me."),
            ]
        },
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "plan, then delegate")
        await agent.aclose()
    refused = last_tool_result(router.seen["MARK-P"][1])
    assert "plan mode" in refused.lower()
    assert not (workspace / "notes.txt").exists()


LEAD = """\
---
name: lead
description: Splits a task and hands the parts on.
tools: Agent, Read
---
Hand each part to an explore agent.
"""


@pytest.mark.parametrize(("max_depth", "lead_delegates"), [(2, True), (1, False)])
async def test_delegation_is_bounded_by_depth_and_the_profile(
    make_runtime: Any, workspace: Path, max_depth: int, lead_delegates: bool
) -> None:
    (workspace / ".deftly" / "agents").mkdir(parents=True)
    (workspace / ".deftly" / "agents" / "lead.md").write_text(LEAD)
    lead_steps: list[Any] = [say("Done leading.")]
    if lead_delegates:
        lead_steps.insert(0, calls(agent_call("MARK-G: look around", subagent_type="explore")))
    router = Router(
        parent=[
            calls(agent_call("MARK-L: lead", subagent_type="lead")),
            calls(agent_call("MARK-C: code")),
            say("ok"),
        ],
        children={
            "MARK-L": lead_steps,
            "MARK-G": [say("Looked.")],
            "MARK-C": [say("Coded.")],
        },
    )
    config = {"agents": {"max_depth": max_depth}}
    runtime = await make_runtime(features=features(), config=config)
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "lead")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    assert ("Agent" in tool_names(router.seen["MARK-L"][0])) is lead_delegates
    assert tool_names(router.seen["MARK-L"][0]) - {"Agent"} == {"Read"}
    assert "Agent" not in tool_names(router.seen["MARK-C"][0])  # coder: every tool but that
    assert "Write" in tool_names(router.seen["MARK-C"][0])
    if lead_delegates:
        assert "Agent" not in tool_names(router.seen["MARK-G"][0])
        assert "Looked." in tool_results(router.seen["MARK-L"][1])[0]
