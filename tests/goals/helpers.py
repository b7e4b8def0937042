"""A runtime with the goals feature, and a way to play turns on its goal service."""

from __future__ import annotations

import json
from typing import Any

from deftly.features import BUILTIN_FEATURES
from deftly.features.goals.feature import FEATURE
from deftly.features.goals.service import GoalService
from deftly.providers import Usage
from deftly.session.turns import TurnEnd, TurnStart

FEATURES = list(BUILTIN_FEATURES)
assert FEATURE in FEATURES  # a built-in feature


async def goal_runtime(make_runtime: Any, **kwargs: Any) -> Any:
    """A started runtime whose main agent has the goal tools."""
    return await make_runtime(features=FEATURES, **kwargs)


def service(runtime: Any) -> GoalService:
    """The main agent's goal service."""
    found = runtime.agent.services.find(GoalService)
    assert found is not None
    return found


def play_turns(goals: GoalService, count: int, tokens: int = 120, seconds: float = 2.0) -> None:
    """Report `count` finished one-step turns, as the agent loop does."""
    for n in range(count):
        goals.turn_started(TurnStart(f"t{n}", "go"))
        goals.turn_ended(TurnEnd(f"t{n}", "end_turn", 1, Usage(tokens - 20, 20), seconds))


def goal_json(text: str) -> Any:
    """The `goal` of a GetGoal/CreateGoal output."""
    return json.loads(text)["goal"]
