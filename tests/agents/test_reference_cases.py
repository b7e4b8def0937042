"""The reference's Agent cases (builtin-tools §24 case 54, without fork and model pools),
plus background runs on the task board and cancellation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.contract.accesses import Accesses
from deftly.session.subagents import AgentProfile, spoken_duration
from deftly.session.tasks import TaskBoard, TaskStatus
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.agents.helpers import Router, agent_call, features, last_tool_result, of, reported_id
from tests.scripted.script import Reply, Say, calls, say
from tests.scripted.server import ModelServer

ERROR = "<system>ERROR: the tool call failed.</system>\n"


async def test_the_agent_call_declares_no_accesses_and_defaults_to_coder(
    make_runtime: Any,
) -> None:
    router = Router(
        parent=[calls(agent_call("MARK-1: hello")), say("ok")],
        children={"MARK-1": [say("Hello back.")]},
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await agent.start()
        tool = runtime.agent.registry.get("Agent")
        assert tool is not None
        execution = tool.tool.resolve(tool.tool.parse_args({"prompt": "p", "description": "d"}))
        assert execution.accesses == Accesses.none()  # Agent calls run in parallel
        assert execution.description == "Launching coder agent: d"
        assert execution.approval_rule == "Agent"
        described = tool.tool.description
        assert "at most 2 hours" in described
        assert "- explore: " in described and "- plan: " in described
        # the web tools when present: FetchURL is, WebSearch is not configured
        assert "  Tools: Read, Glob, Grep, ReadMediaFile, ListDirectory, FetchURL\n" in described
        assert "- coder: " in described and "  Tools: all\n" in described
        runtime.agent.subagents.profiles["late"] = AgentProfile("late", "Added later.", ("Read",))
        assert "- late: Added later.\n  Tools: Read" in tool.tool.description  # read afresh
        await run_turn(agent, "say hello through a child")
        await agent.aclose()
    result = last_tool_result(router.seen["parent"][1])
    assert result.startswith("agent_id: coder-")
    assert "\nactual_subagent_type: coder\nstatus: completed\n\n[summary]\nHello back." in result


def test_the_timeout_reads_as_the_reference_says() -> None:
    assert spoken_duration(7200) == "2 hours"
    assert spoken_duration(60) == "1 minute"
    assert spoken_duration(30) == "30s"


async def test_a_child_that_runs_out_of_time_fails_with_a_resume_hint(make_runtime: Any) -> None:
    gate = threading.Event()
    router = Router(
        parent=[calls(agent_call("MARK-T: take forever")), say("ok")],
        children={"MARK-T": [Reply((Say("still thinking"),), gate=gate)]},
    )
    runtime = await make_runtime(features=features(), config={"agents": {"timeout": 1}})
    try:
        with ModelServer(router) as server:
            agent = Agent(runtime, openai_provider(server))
            turn = await run_turn(agent, "wait for a slow child")
            gate.set()
            await agent.aclose()
    finally:
        gate.set()
    result = last_tool_result(router.seen["parent"][1])
    child_id = reported_id(router.seen["parent"][1])
    assert result == (
        f"{ERROR}agent_id: {child_id}\nactual_subagent_type: coder\nstatus: failed\n\n"
        "subagent error: Agent timed out after 1s.\n"
        f'resume_hint: Continue with Agent(resume="{child_id}", prompt="continue"). Use '
        "agent_id only; do not set subagent_type."
    )
    [ended] = of(turn.events, ev.SubagentEnded)
    assert ended.status == "timed_out"
    assert runtime.agent.subagents.backend is None


async def test_background_needs_the_task_tools(make_runtime: Any) -> None:
    router = Router(
        parent=[calls(agent_call("MARK-B: later", run_in_background=True)), say("ok")],
        children={},
    )
    config = {"tools": {"disabled": ["TaskStop"]}}
    runtime = await make_runtime(features=features(), config=config)
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await agent.start()
        entry = runtime.agent.registry.get("Agent")
        assert entry is not None and "Background runs are not available" in entry.tool.description
        await run_turn(agent, "start one in the background")
        await agent.aclose()
    assert last_tool_result(router.seen["parent"][1]) == (
        f"{ERROR}Background agent execution is not available for this agent because "
        "TaskList, TaskOutput, and TaskStop are not enabled."
    )


async def test_a_background_child_reports_to_its_parent_when_it_ends(make_runtime: Any) -> None:
    gate = threading.Event()
    router = Router(
        parent=[
            calls(agent_call("MARK-BG: survey the repo", run_in_background=True)),
            say("Started it."),
            say("The survey is in."),
        ],
        children={"MARK-BG": [Reply((Say("The repo has 3 packages."),), gate=gate)]},
    )
    runtime = await make_runtime(features=features())
    board = runtime.service(TaskBoard)
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        first = await run_turn(agent, "survey in the background")
        assert first.end.stop_reason == "end_turn"
        started = last_tool_result(router.seen["parent"][1])
        [task] = board.entries(kind="agent")
        child_id = reported_id(router.seen["parent"][1])
        assert started.startswith(f"task_id: {task.id}\nstatus: running\nagent_id: {child_id}\n")
        assert task.id.startswith("agent-")
        assert "\nautomatic_notification: true\n" in started
        hint = "resume_hint: To continue or recover this same subagent later, call Agent("
        assert f'{hint}resume="{child_id}"' in started
        assert task.running
        listed = await runtime.call("TaskList", {})
        assert task.id in listed.text
        gate.set()
        assert await task.wait(30)
        assert task.status is TaskStatus.COMPLETED
        await run_turn(agent, "anything new?")
        output = await runtime.call("TaskOutput", {"task_id": task.id})
        assert "The repo has 3 packages." in output.text
        await agent.aclose()
    # the next turn's request carries the notice, with the child's report in it
    told = [content_text(m) for m in router.seen["parent"][2]["messages"]]
    [notice] = [t for t in told if f"Background agent task {task.id}" in t]
    assert "completed. The sub-agent's report:" in notice
    assert "The repo has 3 packages." in notice


async def test_task_stop_stops_a_background_child(make_runtime: Any) -> None:
    gate = threading.Event()
    router = Router(
        parent=[calls(agent_call("MARK-ST: forever", run_in_background=True)), say("Started.")],
        children={"MARK-ST": [Reply((Say("never seen"),), gate=gate)]},
    )
    runtime = await make_runtime(features=features())
    board = runtime.service(TaskBoard)
    try:
        with ModelServer(router) as server:
            agent = Agent(runtime, openai_provider(server))
            await run_turn(agent, "start a child")
            [task] = board.entries(kind="agent")
            child_id = reported_id(router.seen["parent"][1])
            assert await asyncio.to_thread(router.child_asked.wait, 30)
            backend = runtime.agent.subagents.backend
            assert backend is not None and backend.is_running(child_id)
            stopped = await runtime.call("TaskStop", {"task_id": task.id})
            assert not stopped.is_error, stopped.text
            assert task.status is TaskStatus.KILLED
            assert not backend.is_running(child_id)
            await agent.aclose()
    finally:
        gate.set()


async def test_cancelling_the_parent_stops_its_child(make_runtime: Any) -> None:
    gate = threading.Event()
    router = Router(
        parent=[calls(agent_call("MARK-C: slow"))],
        children={"MARK-C": [Reply((Say("never seen"),), gate=gate)]},
    )
    runtime = await make_runtime(features=features())
    try:
        with ModelServer(router) as server:
            agent = Agent(runtime, openai_provider(server))
            running = asyncio.ensure_future(run_turn(agent, "delegate then cancel"))
            assert await asyncio.to_thread(router.child_asked.wait, 30)
            agent.cancel()  # as Ctrl-C does
            turn = await asyncio.wait_for(running, 30)
            backend = runtime.agent.subagents.backend
            assert backend is not None and not backend.is_running(
                of(turn.events, ev.SubagentStarted)[0].agent_id
            )
            await agent.aclose()
    finally:
        gate.set()
    assert turn.end.stop_reason == "cancelled"
    [ended] = of(turn.events, ev.SubagentEnded)
    assert ended.status == "cancelled"
    assert ended.error == "The subagent was stopped before it finished by user."
    [result] = [e for e in of(turn.events, ev.ToolResult) if e.name == "Agent"]
    assert result.is_error and "stopped before it finished by user" in result.output
