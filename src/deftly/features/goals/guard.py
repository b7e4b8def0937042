"""The "current goal changed" check shared by the goal tools.

A call remembers the goal it saw at resolve. By the time it runs, another call of the same
batch may have created, replaced or removed the goal; acting then would touch a goal the
model did not mean. A goal created in the running turn is fine (CreateGoal then
SetGoalBudget in one reply).
"""

from __future__ import annotations

from deftly.features.goals.service import GoalService
from deftly.features.goals.state import Goal


def seen_id(goals: GoalService) -> str | None:
    """The id of the current goal at resolve."""
    goal = goals.goal
    return goal.goal_id if goal is not None else None


def changed(goals: GoalService, seen: str | None) -> bool:
    """Whether the current goal is not the one seen at resolve (nor one this turn made)."""
    goal: Goal | None = goals.goal
    now = goal.goal_id if goal is not None else None
    if now == seen:
        return False
    return now is not None and not goals.created_this_turn(now)
