"""The same loop over each provider and mode: Anthropic streamed and whole, OpenAI whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from deftly.agent import Agent
from deftly.providers.anthropic_messages import AnthropicProvider
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, Reply, Say, Think, calls, say
from tests.scripted.server import ModelServer


def anthropic(server: ModelServer, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(
        model="scripted", base_url=server.anthropic_url, api_key="k", **options
    )


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


async def test_an_anthropic_turn_with_thinking_and_parallel_calls(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    runtime = await make_runtime()
    first = Reply(
        (
            Think("I should read a.txt and list files.", signature="sig-a"),
            Call("Read", {"path": str(workspace / "a.txt")}),
            Call("Glob", {"pattern": "*.txt"}),
        ),
        chunk=5,
    )
    with ModelServer([first, say("It says alpha.")]) as server:
        agent = Agent(runtime, anthropic(server, reasoning_effort="low"))
        turn = await run_turn(agent, "what is in a.txt?")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn" and turn.end.text == "It says alpha."
    second = server.requests[1]
    assistant = next(m for m in reversed(second["messages"]) if m["role"] == "assistant")
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds[0] == "thinking" and assistant["content"][0]["signature"] == "sig-a"
    assert kinds.count("tool_use") == 2
    results = tool_results(second)
    assert [r["tool_use_id"] for r in results] == [
        b["id"] for b in assistant["content"] if b["type"] == "tool_use"
    ]
    assert "alpha" in str(results[0]["content"])
    # prompt caching: the system prompt carries a cache breakpoint on every request
    assert all(r["system"][-1].get("cache_control") for r in server.requests)


async def test_an_anthropic_image_result_goes_inside_the_tool_result(
    make_runtime: Any, workspace: Path
) -> None:
    Image.new("RGB", (8, 8), (0, 0, 255)).save(workspace / "blue.png")
    runtime = await make_runtime()
    script = [calls(Call("ReadMediaFile", {"path": str(workspace / "blue.png")})), say("blue")]
    with ModelServer(script) as server:
        agent = Agent(runtime, anthropic(server))
        await run_turn(agent, "colour?")
        await agent.aclose()
    [result] = tool_results(server.requests[1])
    assert any(block.get("type") == "image" for block in result["content"])


async def test_whole_replies_without_streaming(make_runtime: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    runtime = await make_runtime()
    script = [calls(Call("Read", {"path": str(workspace / "a.txt")})), Reply((Say("alpha"),))]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server, stream=False))
        turn = await run_turn(agent, "read")
        await agent.aclose()
    assert not any(r.get("stream") for r in server.requests)
    assert turn.end.text == "alpha" and turn.end.steps == 2
    assert "alpha" in content_text(tool_messages(server.requests[1])[0])
    with ModelServer(script) as server:
        agent = Agent(await make_runtime(), anthropic(server, stream=False))
        turn = await run_turn(agent, "read")
        await agent.aclose()
    assert turn.end.text == "alpha" and turn.end.steps == 2
