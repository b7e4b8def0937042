"""Shared pieces of the OpenAI provider tests: a provider on a scripted server, and the
parts a request streams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deftly.providers import ChatRequest, Message, OpenAIProvider, StreamPart, ToolSpec
from tests.scripted.server import ModelServer

READ = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"path": {}}})


def provider(server: ModelServer, **options: Any) -> OpenAIProvider:
    """A provider talking to `server`."""
    return OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k", **options)


def request(*messages: Message, system: str = "You help.", **options: Any) -> ChatRequest:
    """A request (one user message when none is given)."""
    return ChatRequest(
        system,
        list(messages) or [Message.user("hi")],
        tools=options.pop("tools", [READ]),
        **options,
    )


async def parts(
    server: ModelServer, req: ChatRequest | None = None, **options: Any
) -> list[StreamPart]:
    """Every part one request streams."""
    chat = provider(server, **options)
    try:
        return [part async for part in chat.stream(req or request())]
    finally:
        await chat.aclose()


def kinds(items: Sequence[StreamPart]) -> list[str]:
    """The parts' class names, in order."""
    return [type(item).__name__ for item in items]
