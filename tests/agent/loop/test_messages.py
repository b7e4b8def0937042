"""How results and injections reach the model: images, background-task notices."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PIL import Image

from deftly.agent import Agent
from deftly.execution.events import RuntimeNotice
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer


async def test_an_image_result_follows_the_tool_message_where_results_take_no_images(
    make_runtime: Any, workspace: Path
) -> None:
    Image.new("RGB", (16, 8), (200, 10, 10)).save(workspace / "red.png")
    runtime = await make_runtime()
    script = [calls(Call("ReadMediaFile", {"path": str(workspace / "red.png")})), say("red")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "what colour?")
        await agent.aclose()
    messages = server.requests[1]["messages"]
    [result] = tool_messages(server.requests[1])
    assert "follows in the next message" in content_text(result)
    after = messages[messages.index(result) + 1]
    assert after["role"] == "user"
    kinds = [part["type"] for part in after["content"]]
    assert "image_url" in kinds
    image = next(p for p in after["content"] if p["type"] == "image_url")
    assert image["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_background_task_that_ends_is_announced_in_the_next_request(
    make_runtime: Any, workspace: Path
) -> None:
    runtime = await make_runtime()
    ended = asyncio.Event()

    def watch(event: object) -> None:
        if isinstance(event, RuntimeNotice) and event.kind == "task_finished":
            ended.set()

    runtime.subscribe(watch)
    flag = workspace / "done.flag"
    script = [
        calls(Call("Bash", {"command": f"touch {flag}", "run_in_background": True})),
        say("Started."),
        say("It finished."),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        first = await run_turn(agent, "start it")
        assert first.end.stop_reason == "end_turn"
        await asyncio.wait_for(ended.wait(), 60)
        await agent.run("check")
        await agent.aclose()
    assert flag.exists()
    last = server.requests[-1]["messages"]
    [told] = [
        content_text(m) for m in last if "<system>" in content_text(m) and m["role"] == "user"
    ]
    assert "touch" in told or "bash" in told.lower()
    assert "check" in told  # it rides with the user's next message
