"""What an agent's features learn about its loop's turns, and how they limit them.

One `LoopHooks` per agent (in its scope, and on `AgentContext.loop`). An agent loop, when
one drives the agent, asks every `TurnBudget` before each step (a text ends the turn with
`stop_reason="budget"` and is told to the model), reports each turn's start and end, and
asks the state readers what a compacted history must keep (the todo list, the goal).
Without a loop nothing is asked or reported. Plain types only: features do not see the
provider layer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from deftly.contract.records import frozen

log = logging.getLogger(__name__)

E = TypeVar("E")


class TurnUsage(Protocol):
    """Tokens a turn used so far (a `deftly.providers.Usage`)."""

    @property
    def input_tokens(self) -> int:
        """Prompt tokens, cached or not."""
        ...

    @property
    def output_tokens(self) -> int:
        """Reply tokens."""
        ...

    @property
    def total_tokens(self) -> int:
        """Prompt plus reply."""
        ...


class TurnBudget(Protocol):
    """A limit on a turn beyond its step count (tokens, wall time, a goal's budget)."""

    def exceeded(self, *, steps: int, usage: TurnUsage, seconds: float) -> str | None:
        """Why the turn must end now (told to the model), or None."""
        ...


@frozen
class TurnStart:
    """A turn began."""

    turn_id: str
    prompt: str


@frozen
class TurnEnd:
    """A turn ended: why, and what it cost."""

    turn_id: str
    stop_reason: str
    steps: int
    usage: TurnUsage
    seconds: float


@dataclass
class LoopHooks:
    """One agent's turn budgets and turn listeners (see the module docstring)."""

    budgets: list[TurnBudget] = field(default_factory=list)
    started: list[Callable[[TurnStart], None]] = field(default_factory=list)
    ended: list[Callable[[TurnEnd], None]] = field(default_factory=list)
    states: list[Callable[[], str | None]] = field(default_factory=list)

    def add_budget(self, budget: TurnBudget) -> Callable[[], None]:
        """Ask `budget` before every step; returns the way to stop."""
        self.budgets.append(budget)
        return lambda: _discard(self.budgets, budget)

    def on_turn_start(self, listener: Callable[[TurnStart], None]) -> Callable[[], None]:
        """Call `listener` as each turn begins; returns the way to stop."""
        self.started.append(listener)
        return lambda: _discard(self.started, listener)

    def on_turn_end(self, listener: Callable[[TurnEnd], None]) -> Callable[[], None]:
        """Call `listener` as each turn ends; returns the way to stop."""
        self.ended.append(listener)
        return lambda: _discard(self.ended, listener)

    def add_state(self, reader: Callable[[], str | None]) -> Callable[[], None]:
        """Let `reader` say what state a compacted history must carry (the todo list, the
        goal), as a short text or None; returns the way to stop."""
        self.states.append(reader)
        return lambda: _discard(self.states, reader)

    def state_text(self) -> str | None:
        """Every state reader's text, one paragraph each, or None when none has any (a
        reader that raises is logged and left out)."""
        parts: list[str] = []
        for reader in tuple(self.states):
            try:
                text = reader()
            except Exception:
                log.exception("state reader %r failed", reader)
                continue
            if text and text.strip():
                parts.append(text.strip())
        return "\n\n".join(parts) or None

    def exceeded(self, *, steps: int, usage: TurnUsage, seconds: float) -> str | None:
        """The first budget's reason to end the turn, or None (a budget that raises is
        logged and ignored)."""
        for budget in tuple(self.budgets):
            try:
                reason = budget.exceeded(steps=steps, usage=usage, seconds=seconds)
            except Exception:
                log.exception("turn budget %r failed", budget)
                continue
            if reason:
                return reason
        return None

    def turn_started(self, event: TurnStart) -> None:
        """Tell every listener a turn began."""
        for listener in tuple(self.started):
            _safely(listener, event)

    def turn_ended(self, event: TurnEnd) -> None:
        """Tell every listener a turn ended."""
        for listener in tuple(self.ended):
            _safely(listener, event)


def _safely(listener: Callable[[E], None], event: E) -> None:
    try:
        listener(event)
    except Exception:
        log.exception("turn listener failed")


def _discard(items: list[E], item: E) -> None:
    if item in items:
        items.remove(item)
