"""The agent loop: turns and steps over a `Runtime`, with streaming dispatch of tool calls,
results turned into messages, the context window kept, and transcripts to resume from.

`Agent` (and `TurnResult`) are imported on first use, so `import deftly` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deftly.agent.events import AgentEvent, StopReason
from deftly.session.turns import TurnBudget

if TYPE_CHECKING:
    from deftly.agent.agent import Agent, TurnResult

__all__ = ["Agent", "AgentEvent", "StopReason", "TurnBudget", "TurnResult"]


def __getattr__(name: str) -> Any:
    if name in ("Agent", "TurnResult"):
        from deftly.agent import agent

        return getattr(agent, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
