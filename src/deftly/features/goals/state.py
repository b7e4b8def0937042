"""A goal as the session store keeps it, and how the model sees it.

One goal per session (the main agent's), in the store key `goal`, so it survives a resumed
session. Usage (turns, tokens, wall time) counts the turns the goal was active in; the
budget caps any of the three.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

GoalStatus = Literal["active", "paused", "blocked", "complete"]

STORE_KEY = "goal"
"""The session-store key of the main agent's goal."""


class Goal(BaseModel):
    """One goal: what to reach, how to tell, where it stands and what it may spend."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    goal_id: str
    objective: str
    completion_criterion: str | None = None
    status: GoalStatus = "active"
    turns_used: int = 0
    """Turns finished while the goal was active."""
    tokens_used: int = 0
    wall_ms: int = 0
    """Time spent in those turns (the agent working on it, not idle time between turns)."""
    token_budget: int | None = None
    turn_budget: int | None = None
    wall_budget_ms: int | None = None
    terminal_reason: str | None = None


class GoalState(BaseModel):
    """The store value: the current goal, or none."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    goal: Goal | None = None


def reached(goal: Goal, tokens: int, wall_ms: int) -> dict[str, bool]:
    """Which budgets `goal` has reached with these totals (turns: the finished ones)."""
    return {
        "turns": goal.turn_budget is not None and goal.turns_used >= goal.turn_budget,
        "tokens": goal.token_budget is not None and tokens >= goal.token_budget,
        "wall_clock": goal.wall_budget_ms is not None and wall_ms >= goal.wall_budget_ms,
    }


def _remaining(limit: int | None, used: int) -> int | None:
    return None if limit is None else max(0, limit - used)


def for_model(goal: Goal, tokens: int, wall_ms: int) -> dict[str, Any]:
    """The snapshot the tools show: `tokens`/`wall_ms` include the running turn."""
    hit = reached(goal, tokens, wall_ms)
    shown: dict[str, Any] = {"objective": goal.objective}
    if goal.completion_criterion:
        shown["completionCriterion"] = goal.completion_criterion
    shown |= {
        "status": goal.status,
        "turnsUsed": goal.turns_used,
        "tokensUsed": tokens,
        "wallClockMs": wall_ms,
        "budget": {
            "tokenBudget": goal.token_budget,
            "turnBudget": goal.turn_budget,
            "wallClockBudgetMs": goal.wall_budget_ms,
            "remainingTokens": _remaining(goal.token_budget, tokens),
            "remainingTurns": _remaining(goal.turn_budget, goal.turns_used),
            "remainingWallClockMs": _remaining(goal.wall_budget_ms, wall_ms),
            "tokenBudgetReached": hit["tokens"],
            "turnBudgetReached": hit["turns"],
            "wallClockBudgetReached": hit["wall_clock"],
            "overBudget": any(hit.values()),
        },
    }
    if goal.terminal_reason:
        shown["terminalReason"] = goal.terminal_reason
    return shown


def render(snapshot: dict[str, Any] | None) -> str:
    """`{"goal": ...}` as two-space JSON, the tools' output."""
    return json.dumps({"goal": snapshot}, indent=2, ensure_ascii=False)


def format_elapsed(ms: int) -> str:
    """`42s`, `3m05s`, `2h07m`."""
    seconds = max(0, ms) // 1000
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def format_tokens(tokens: int) -> str:
    """`950`, `12.3k`, `1.2M`."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"


def plural(count: int, word: str) -> str:
    """`1 turn`, `2 turns`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
