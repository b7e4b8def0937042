"""Driving a real `Agent` over a real runtime against the scripted model server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deftly.agent import Agent, AgentEvent
from deftly.agent import events as ev
from deftly.providers.openai_chat import OpenAIProvider
from tests.scripted.server import ModelServer


def openai_provider(server: ModelServer, **options: Any) -> OpenAIProvider:
    """The real OpenAI SDK provider, pointed at the scripted server."""
    return OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k", **options)


@dataclass
class Turn:
    """A finished turn: its events and its end."""

    events: list[AgentEvent] = field(default_factory=list)

    @property
    def end(self) -> ev.TurnEnded:
        last = self.events[-1]
        assert isinstance(last, ev.TurnEnded)
        return last

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


async def run_turn(
    agent: Agent, prompt: str, on_event: Callable[[AgentEvent], None] | None = None
) -> Turn:
    """Run one turn through `agent.stream`, keeping every event."""
    turn = Turn()
    async for event in agent.stream(prompt):
        turn.events.append(event)
        if on_event is not None:
            on_event(event)
    return turn


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool messages of a recorded OpenAI request."""
    return [m for m in request["messages"] if m["role"] == "tool"]


def content_text(message: dict[str, Any]) -> str:
    """A recorded message's content as text (a string or text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not content:
        return ""
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))
