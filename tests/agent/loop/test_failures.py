"""Provider failures inside a turn: retried with backoff, or a clear end."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.providers.openai_chat import OpenAIProvider
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, Fail, Reply, Say, calls, say
from tests.scripted.server import ModelServer


async def test_a_429_is_retried_after_its_retry_after(make_runtime: Any) -> None:
    runtime = await make_runtime()
    script = [Fail(429, headers={"retry-after": "0"}), say("made it")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "hi")
        await agent.aclose()
    [retry] = turn.of(ev.Retrying)
    assert retry.attempt == 1 and retry.delay == 0
    assert turn.end.stop_reason == "end_turn" and turn.end.text == "made it"
    assert len(server.requests) == 2


async def test_retries_running_out_end_the_turn_with_the_error(make_runtime: Any) -> None:
    runtime = await make_runtime(config={"loop": {"max_attempts_per_step": 2}})
    script = [Fail(503, headers={"retry-after": "0"}), Fail(503, headers={"retry-after": "0"})]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "hi")
        await agent.aclose()
    assert turn.end.stop_reason == "error"
    assert turn.end.error and "503" in turn.end.error
    assert "Traceback" not in turn.end.error
    assert len(server.requests) == 2


async def test_an_unreachable_endpoint_is_a_clear_error(make_runtime: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    runtime = await make_runtime(config={"loop": {"max_attempts_per_step": 1}})
    provider = OpenAIProvider(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    agent = Agent(runtime, provider)
    turn = await run_turn(agent, "hi")
    await agent.aclose()
    assert turn.end.stop_reason == "error"
    assert turn.end.error and f"127.0.0.1:{port}" in turn.end.error


async def test_a_stream_cut_after_a_complete_call_does_not_run_it_twice(
    make_runtime: Any, workspace: Path
) -> None:
    log = workspace / "runs.log"
    runtime = await make_runtime()
    first = Call("Bash", {"command": f"echo ran >> {log}"})
    # The reply streams the Bash call completely, starts a second call, then the connection
    # drops; the step is asked again and the model goes on from the recorded result.
    broken = Reply((first, Call("Glob", {"pattern": "*"})), chunk=400, drop_after=4)
    script = [broken, say("done")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "run it")
        await agent.aclose()
    assert log.read_text() == "ran\n"
    assert turn.of(ev.Retrying)
    assert turn.end.stop_reason == "end_turn"
    retried = server.requests[1]
    [result] = tool_messages(retried)
    assert result["tool_call_id"] == "call_0_0" and "ERROR" not in content_text(result)
    assistant = retried["messages"][-2]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["Bash"]


async def test_an_empty_reply_is_retried(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([Reply(()), Reply((Say("now something"),))]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "hi")
        await agent.aclose()
    assert len(turn.of(ev.Retrying)) == 1
    assert turn.end.text == "now something"


async def test_calls_after_a_stop_turn_result_end_the_turn(make_runtime: Any) -> None:
    runtime = await make_runtime()
    same = Call("Glob", {"pattern": "*.none"})
    script = [calls(same) for _ in range(12)] + [say("unreached")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), max_steps=0)
        turn = await run_turn(agent, "loop")
        await agent.aclose()
    assert turn.end.stop_reason == "stop_turn" and turn.end.steps == 12
    assert len(server.requests) == 12
    third = tool_messages(server.requests[3])[-1]
    assert "3 times in a row" in content_text(third)
