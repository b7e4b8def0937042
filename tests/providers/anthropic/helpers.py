"""Shared pieces of the Anthropic provider tests: a provider on a scripted server, a
request, and what a request streams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deftly.providers import (
    AnthropicProvider,
    ChatRequest,
    Message,
    ProviderError,
    Reply,
    StreamPart,
    ToolSpec,
    collect,
)
from tests.scripted.server import ModelServer

READ = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"path": {}}})
WRITE = ToolSpec("Write", "Write a file.", {"type": "object", "properties": {"path": {}}})


def provider(server: ModelServer, **options: Any) -> AnthropicProvider:
    """A provider talking to `server`."""
    options.setdefault("api_key", "k")
    return AnthropicProvider(model="scripted", base_url=server.anthropic_url, **options)


def request(*messages: Message, system: str = "You help.", **options: Any) -> ChatRequest:
    """A request (one user message when none is given)."""
    return ChatRequest(
        system,
        list(messages) or [Message.user("hi")],
        tools=options.pop("tools", [READ, WRITE]),
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


async def reply(server: ModelServer, req: ChatRequest | None = None, **options: Any) -> Reply:
    """The whole reply to one request."""
    chat = provider(server, **options)
    try:
        return await collect(chat.stream(req or request()))
    finally:
        await chat.aclose()


async def failure(
    server: ModelServer, req: ChatRequest | None = None, **options: Any
) -> ProviderError:
    """The `ProviderError` one request raises (fails the test when it raises none)."""
    try:
        await parts(server, req, **options)
    except ProviderError as error:
        return error
    raise AssertionError("the request succeeded")


def kinds(items: Sequence[StreamPart]) -> list[str]:
    """The parts' class names, in order."""
    return [type(item).__name__ for item in items]
