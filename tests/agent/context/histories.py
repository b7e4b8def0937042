"""Building conversations for the context tests, and checking their shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deftly.agent.context import ContextKeeper
from deftly.config.models import LoopConfig
from deftly.providers.openai_chat import OpenAIProvider
from deftly.providers.reply import collect
from deftly.providers.types import ChatRequest, Message, TextPart, ToolCallRequest
from tests.scripted.server import ModelServer

TASK = "Fix the failing test in tests/test_parse.py without changing the public API."


def step(
    index: int, outputs: Sequence[str], *, text: str = "", error: bool = False
) -> list[Message]:
    """One model step: an assistant message with a call per output, then the results."""
    ids = [f"s{index}c{n}" for n in range(len(outputs))]
    calls = tuple(
        ToolCallRequest(i, "Read", json.dumps({"path": f"f{index}_{n}.py"}))
        for n, i in enumerate(ids)
    )
    reply = Message("assistant", (TextPart(text),) if text else (), tool_calls=calls)
    results = [
        Message("tool", (TextPart(out),), tool_call_id=i, name="Read", is_error=error)
        for i, out in zip(ids, outputs, strict=True)
    ]
    return [reply, *results]


def history(steps: int, size: int, *, calls: int = 1, first: int = 0) -> list[Message]:
    """The task, then `steps` steps (numbered from `first`) of `calls` results of `size`
    characters each: the loop is about to send the next request."""
    out = [Message.user(TASK)]
    for i in range(first, first + steps):
        outputs = [f"line {i}.{n}: " + "x" * size + f"\nend of {i}.{n}" for n in range(calls)]
        out += step(i, outputs, text=f"step {i}")
    return out


def keeper(tmp_path: Path, window: int, **loop: Any) -> ContextKeeper:
    return ContextKeeper(window=window, loop=LoopConfig(**loop), elided_dir=tmp_path / "elided")


def assert_paired(messages: Sequence[Message]) -> None:
    """Every call answered by exactly one result, right after its assistant message (or
    after the results before it), and no result without its call."""
    open_calls: list[str] = []
    seen: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in open_calls, f"orphan result {message.tool_call_id}"
            assert message.tool_call_id not in seen, f"two results for {message.tool_call_id}"
            seen.add(message.tool_call_id)
            continue
        assert set(open_calls) <= seen, f"unanswered calls {set(open_calls) - seen}"
        open_calls = [c.id for c in message.tool_calls]
    assert set(open_calls) <= seen, f"unanswered calls {set(open_calls) - seen}"


def provider(server: ModelServer) -> OpenAIProvider:
    return OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k")


def summarizer(server: ModelServer) -> Any:
    """The loop's summarizer in miniature: one tool-less request, its text."""
    model = provider(server)

    async def summarize(request: ChatRequest) -> str:
        return (await collect(model.stream(request))).message.text

    return summarize


def user_text(request: dict[str, Any]) -> str:
    """All user text of a recorded OpenAI request."""
    out = []
    for message in request["messages"]:
        if message["role"] == "user":
            content = message["content"]
            out.append(
                content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            )
    return "\n".join(out)
