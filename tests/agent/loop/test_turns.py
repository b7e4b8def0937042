"""Turns and steps against the scripted server through the real openai SDK: text, tool
calls in many chunks, parallel calls, malformed arguments, refusals, limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, Reply, Say, calls, say
from tests.scripted.server import ModelServer


async def test_a_reply_without_tool_calls_ends_the_turn(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([say("Hello there, I am done.", chunk=3)]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "say hello")
        await agent.aclose()
    end = turn.end
    assert (end.stop_reason, end.text, end.steps) == ("end_turn", "Hello there, I am done.", 1)
    assert "".join(e.text for e in turn.of(ev.TextDelta)) == "Hello there, I am done."
    assert end.usage.input_tokens == 100 and end.usage.output_tokens == 20
    body = server.requests[0]
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1] == {"role": "user", "content": "say hello"}
    assert {t["function"]["name"] for t in body["tools"]} >= {"Read", "Write", "Bash"}


async def test_parallel_calls_split_over_many_chunks_come_back_in_call_order(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    runtime = await make_runtime()
    script = [
        calls(
            Call("Read", {"path": str(workspace / "a.txt")}),
            Call("Read", {"path": str(workspace / "b.txt")}),
            chunk=2,
        ),
        say("Both read."),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "read both")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn" and turn.end.steps == 2
    results = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in results] == ["call_0_0", "call_0_1"]
    assert "alpha" in content_text(results[0]) and "beta" in content_text(results[1])
    assistant = server.requests[1]["messages"][-3]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["Read", "Read"]
    calls_seen = turn.of(ev.ToolCall)
    assert [c.arguments for c in calls_seen] == [
        {"path": str(workspace / "a.txt")},
        {"path": str(workspace / "b.txt")},
    ]


async def test_malformed_arguments_go_back_to_the_model_and_the_turn_goes_on(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    script = [calls(Call("Read", '{"path": "a.txt",')), say("Sorry, fixed.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "read")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    [result] = tool_messages(server.requests[1])
    text = content_text(result)
    assert "ERROR" in text and "not valid JSON" in text
    [shown] = turn.of(ev.ToolResult)
    assert shown.is_error


async def test_an_unknown_tool_is_an_error_result_not_a_failed_turn(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([calls(Call("Raed", {"path": "x"})), say("ok")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    [result] = tool_messages(server.requests[1])
    assert 'no tool named "Raed"' in content_text(result) and "Read" in content_text(result)
    assert turn.end.stop_reason == "end_turn"


async def test_a_denied_call_is_reported_to_the_model(make_runtime: Any, workspace: Path) -> None:
    runtime = await make_runtime(config={"permissions": {"deny": ["Write"]}})
    target = workspace / "x.txt"
    script = [calls(Call("Write", {"path": str(target), "content": "hi"})), say("It was refused.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "write it")
        await agent.aclose()
    assert not target.exists()
    [result] = tool_messages(server.requests[1])
    assert "ERROR" in content_text(result)
    assert "denied by the permission rule" in content_text(result)
    assert turn.end.stop_reason == "end_turn"


async def test_max_steps_ends_the_turn_and_says_so_next_time(make_runtime: Any) -> None:
    runtime = await make_runtime()
    script = [calls(Call("Glob", {"pattern": f"*{n}"})) for n in range(3)] + [say("done")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), max_steps=2)
        first = await run_turn(agent, "look around")
        second = await run_turn(agent, "go on")
        await agent.aclose()
    assert (first.end.stop_reason, first.end.steps) == ("max_steps", 2)
    assert len(server.requests) == 4
    told = [content_text(m) for m in server.requests[2]["messages"] if m["role"] == "user"]
    assert any("step limit" in t for t in told)
    assert second.end.stop_reason == "stop_turn" or second.end.stop_reason == "end_turn"


async def test_usage_missing_is_zero_not_an_error(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([Reply((Say("fine"),), usage=None)]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "hi")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn" and turn.end.usage.total_tokens == 0


async def test_a_filtered_reply_ends_the_turn_with_an_error(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([Reply((Say("partial"),), finish="content_filter")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "hi")
        await agent.aclose()
    assert turn.end.stop_reason == "error" and "safety filter" in (turn.end.error or "")


async def test_run_returns_the_text_messages_and_usage(make_runtime: Any, workspace: Path) -> None:
    (workspace / "n.txt").write_text("42\n")
    runtime = await make_runtime()
    script = [calls(Call("Read", {"path": str(workspace / "n.txt")})), say("It says 42.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        result = await agent.run("what is in n.txt?")
        await agent.aclose()
    assert result.text == "It says 42." and result.stop_reason == "end_turn"
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.usage.input_tokens == 200
    assert result.session_id == runtime.session_id


async def test_the_system_prompt_is_byte_stable_across_steps_and_states_the_workspace(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    runtime = await make_runtime()
    script = [calls(Call("Glob", {"pattern": "*"})), say("done"), say("again")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await agent.run("one")
        await agent.run("two")
        await agent.aclose()
    systems = [json.dumps(r["messages"][0]) for r in server.requests]
    assert len(set(systems)) == 1
    system = server.requests[0]["messages"][0]["content"]
    assert str(workspace) in system and "Always answer in haiku." in system


async def test_a_token_budget_ends_the_turn_with_budget_and_says_why(make_runtime: Any) -> None:
    runtime = await make_runtime(config={"loop": {"max_turn_tokens": 150}})
    script = [calls(Call("Glob", {"pattern": "*1"})), calls(Call("Glob", {"pattern": "*2"}))]
    with ModelServer([*script, say("summary")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.run("and now?")
        await agent.aclose()
    assert (turn.end.stop_reason, turn.end.steps) == ("budget", 2)
    assert turn.end.error and "max_turn_tokens" in turn.end.error
    told = [content_text(m) for m in server.requests[2]["messages"] if m["role"] == "user"]
    assert any("its budget of 150" in t for t in told)


async def test_a_note_reaches_the_model_once_in_a_system_block(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "one.txt").write_text("only line\n")
    runtime = await make_runtime()
    script = [calls(Call("Read", {"path": str(workspace / "one.txt")})), say("ok")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "read")
        await agent.aclose()
    text = content_text(tool_messages(server.requests[1])[0])
    assert "only line" in text and text.count("<system>") == 1 and "<system><system>" not in text


async def test_an_agents_loop_hooks_limit_and_hear_its_turns(make_runtime: Any) -> None:
    from deftly.session.turns import TurnEnd, TurnStart

    runtime = await make_runtime()
    heard: list[object] = []

    class TwoSteps:
        def exceeded(self, *, steps: int, usage: Any, seconds: float) -> str | None:
            return "a feature's budget: two steps" if steps >= 2 else None

    hooks = runtime.agent.loop_hooks
    stop = hooks.add_budget(TwoSteps())
    hooks.on_turn_start(heard.append)
    hooks.on_turn_end(heard.append)
    script = [calls(Call("Glob", {"pattern": f"*{n}"})) for n in range(3)]
    with ModelServer([*script, say("done")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        stop()
        after = await run_turn(agent, "again")
        await agent.aclose()
    assert (turn.end.stop_reason, turn.end.error) == ("budget", "a feature's budget: two steps")
    assert after.end.stop_reason != "budget"
    start, end = heard[0], heard[1]
    assert isinstance(start, TurnStart) and start.prompt == "go"
    assert isinstance(end, TurnEnd) and (end.stop_reason, end.steps) == ("budget", 2)
    assert end.usage.total_tokens == 240
