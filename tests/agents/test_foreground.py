"""A parent calls Agent and gets its sub-agent's report: one scripted server plays both
(keyed by the sub-agent role in the system prompt and a marker in the child's prompt)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from tests.agent.loop.helpers import openai_provider, run_turn
from tests.agents.helpers import Router, features, last_tool_result, of, system_text
from tests.scripted.script import Call, Reply, Say, calls, say
from tests.scripted.server import ModelServer


def agent_call(prompt: str, **extra: Any) -> Call:
    return Call("Agent", {"prompt": prompt, "description": "look something up", **extra})


async def test_the_parent_gets_the_childs_report_and_both_are_told_apart(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    router = Router(
        parent=[
            calls(agent_call("MARK-A: what does notes.txt say?", subagent_type="explore")),
            say("The sub-agent says 42."),
        ],
        children={
            "MARK-A": [
                calls(Call("Read", {"path": "notes.txt"})),
                say("notes.txt says: the answer is 42", usage=(50, 10)),
            ]
        },
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "ask a sub-agent")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    report = last_tool_result(router.seen["parent"][1])
    [started] = of(turn.events, ev.SubagentStarted)
    child_id = started.agent_id
    assert child_id.startswith("explore-") and started.parent_id == "main"
    summary, note = report.split("\n<system>")
    assert summary == (
        f"agent_id: {child_id}\nactual_subagent_type: explore\nstatus: completed\n\n"
        "[summary]\nnotes.txt says: the answer is 42"
    )
    assert "2 steps (150 input and 30 output tokens)" in note
    assert f'Agent(resume="{child_id}", prompt="...")' in note

    # the child's prompt: the parent's, then the sub-agent role and explore's instructions
    parent_system = system_text(router.seen["parent"][0])
    child_system = system_text(router.seen["MARK-A"][0])
    assert child_system.startswith(parent_system.rstrip("\n"))
    assert "You are a sub-agent" in child_system and "you cannot change files" in child_system
    child_tools = {t["function"]["name"] for t in router.seen["MARK-A"][0]["tools"]}
    assert {"Read", "Glob", "Grep", "ListDirectory"} <= child_tools
    assert not child_tools & {"Write", "Edit", "Bash", "Agent"}

    # the child's events reach the parent's stream with the child's id
    child_calls = [e for e in of(turn.events, ev.ToolCall) if e.agent_id == child_id]
    child_results = [e for e in of(turn.events, ev.ToolResult) if e.agent_id == child_id]
    assert [c.name for c in child_calls] == ["Read"]
    assert "the answer is 42" in child_results[0].output
    assert [e.agent_id for e in of(turn.events, ev.TurnEnded)] == ["main"]
    assert not [e for e in of(turn.events, ev.TextDelta) if e.agent_id != "main"]
    [ended] = of(turn.events, ev.SubagentEnded)
    assert (ended.agent_id, ended.status, ended.text) == (
        child_id,
        "completed",
        "notes.txt says: the answer is 42",
    )

    # usage: per agent, and summed for the turn
    by_agent = turn.end.usage_by_agent
    assert set(by_agent) == {"main", child_id}
    assert by_agent[child_id].input_tokens == 150 and by_agent[child_id].output_tokens == 30
    assert by_agent["main"] == turn.end.usage
    assert turn.end.total_usage.input_tokens == turn.end.usage.input_tokens + 150
    assert turn.end.to_json()["total_usage"]["input_tokens"] == turn.end.usage.input_tokens + 150


FAST = """\
---
name: quick
description: Answers quickly on the fast model.
tools: Read
model: fast
---
Be quick.
"""

BROKEN_MODEL = """\
---
name: remote
description: Uses a model nobody configured.
model: gpt-nowhere
---
"""


async def test_a_type_with_a_model_talks_to_that_model(
    make_runtime: Any, workspace: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    folder = workspace / ".deftly" / "agents"
    folder.mkdir(parents=True)
    (folder / "quick.md").write_text(FAST)
    (folder / "remote.md").write_text(BROKEN_MODEL)
    parent = Router(
        parent=[
            calls(
                agent_call("MARK-Q: quick one", subagent_type="quick"),
                agent_call("MARK-X: remote one", subagent_type="remote"),
            ),
            say("ok"),
        ],
        children={},
    )
    fast = Router(parent=[], children={"MARK-Q": [say("Quick answer.")]})
    with ModelServer(parent) as server, ModelServer(fast, model="fast-model") as fast_server:
        config = {"models": {"fast": {"model": "fast-model", "base_url": fast_server.openai_url}}}
        runtime = await make_runtime(features=features(), config=config)
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "use the fast model")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    assert fast.seen["MARK-Q"][0]["model"] == "fast-model"
    assert "MARK-Q" not in parent.seen  # the parent's server never saw the child
    results = [e for e in of(turn.events, ev.ToolResult) if e.name == "Agent"]
    quick, remote = sorted(results, key=lambda e: "remote" in e.output)
    assert "[summary]\nQuick answer." in quick.output
    assert remote.is_error
    assert 'The "remote" agent type names the model "gpt-nowhere", which cannot be used' in (
        remote.output
    )


async def test_turn_result_sums_usage_and_a_childs_step_limit_fails_its_run(
    make_runtime: Any, workspace: Path
) -> None:
    router = Router(
        parent=[calls(agent_call("MARK-M: look twice")), say("ok")],
        children={"MARK-M": [calls(Call("Glob", {"pattern": "*"}), usage=(10, 5))]},
    )
    runtime = await make_runtime(features=features(), config={"agents": {"max_steps": 1}})
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        result = await agent.run("delegate a long job")
        await agent.aclose()
    report = last_tool_result(router.seen["parent"][1])
    assert (
        "status: failed\n\nsubagent error: The subagent stopped after 1 step (its step limit)"
        in report
    )
    [child_id] = [a for a in result.usage_by_agent if a != "main"]
    assert result.usage_by_agent[child_id].input_tokens == 10
    assert result.total_usage.input_tokens == result.usage.input_tokens + 10
    assert result.total_usage.output_tokens == result.usage.output_tokens + 5


async def test_agent_calls_of_one_reply_run_at_the_same_time(make_runtime: Any) -> None:
    gate = threading.Event()
    router = Router(
        parent=[
            calls(agent_call("MARK-1: one"), agent_call("MARK-2: two")),
            say("Both reported."),
        ],
        children={
            "MARK-1": [Reply((Say("one done"),), gate=gate)],
            "MARK-2": [Reply((Say("two done"),), gate=gate)],
        },
    )
    runtime = await make_runtime(features=features())
    try:
        with ModelServer(router) as server:
            agent = Agent(runtime, openai_provider(server))
            running = asyncio.ensure_future(run_turn(agent, "two at once"))
            # both children ask before either may finish (each waits on the gate)
            assert await asyncio.to_thread(router.wait_for, "MARK-1", "MARK-2")
            gate.set()
            turn = await asyncio.wait_for(running, 30)
            await agent.aclose()
    finally:
        gate.set()
    assert turn.end.stop_reason == "end_turn"
    outputs = [e.output for e in of(turn.events, ev.ToolResult) if e.name == "Agent"]
    summaries = sorted(o.split("[summary]\n")[1].split("\n")[0] for o in outputs)
    assert summaries == ["one done", "two done"]


async def test_a_child_works_the_same_over_the_anthropic_wire(
    make_runtime: Any, workspace: Path
) -> None:
    from deftly.providers.anthropic_messages import AnthropicProvider

    (workspace / "b.txt").write_text("beta\n")
    router = Router(
        parent=[calls(agent_call("MARK-AN: read b.txt", subagent_type="plan")), say("ok")],
        children={"MARK-AN": [calls(Call("Read", {"path": "b.txt"})), say("b.txt holds beta.")]},
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        provider = AnthropicProvider(model="scripted", base_url=server.anthropic_url, api_key="k")
        agent = Agent(runtime, provider)
        turn = await run_turn(agent, "plan with a child")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    [result] = [e for e in of(turn.events, ev.ToolResult) if e.name == "Agent"]
    assert "actual_subagent_type: plan\nstatus: completed\n\n[summary]\nb.txt holds beta." in (
        result.output
    )
    [read] = [e for e in of(turn.events, ev.ToolResult) if e.name == "Read"]
    assert read.agent_id.startswith("plan-") and "beta" in read.output
    assert "You are a sub-agent" in system_text(router.seen["MARK-AN"][0])
