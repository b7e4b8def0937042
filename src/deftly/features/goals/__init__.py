"""Goal tools: CreateGoal, GetGoal, UpdateGoal, SetGoalBudget (state in `state.py`, the
loop's side in `service.py`)."""

from __future__ import annotations

from deftly.features.goals.create_goal import CreateGoalTool
from deftly.features.goals.get_goal import GetGoalTool
from deftly.features.goals.service import GoalService
from deftly.features.goals.set_goal_budget import SetGoalBudgetTool
from deftly.features.goals.update_goal import UpdateGoalTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(CreateGoalTool),
    ToolContribution.of(GetGoalTool),
    ToolContribution.of(UpdateGoalTool),
    ToolContribution.of(SetGoalBudgetTool),
]

__all__ = [
    "CONTRIBUTIONS",
    "CreateGoalTool",
    "GetGoalTool",
    "GoalService",
    "SetGoalBudgetTool",
    "UpdateGoalTool",
]
