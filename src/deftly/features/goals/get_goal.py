"""GetGoal: the current goal, its usage and its budget."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.goals.service import MAIN_ONLY, GoalService
from deftly.features.goals.state import for_model, render


class GetGoalParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GetGoalTool(Tool[GetGoalParams]):
    """Reads the session's goal (`{"goal": null}` when there is none)."""

    name = "GetGoal"
    title = "Show the goal"
    description = describe("get_goal.md")
    params = GetGoalParams
    traits = ToolTraits(read_only=True, idempotent=True)

    def __init__(self, goals: GoalService) -> None:
        self.goals = goals

    def resolve(self, args: GetGoalParams) -> ToolExecution | ToolResult:
        """Refuse sub-agents; otherwise read the goal when the call runs."""
        if not self.goals.main:
            return ToolResult.error(MAIN_ONLY)

        async def get(ctx: ToolContext) -> ToolResult:
            goal = self.goals.goal
            return ToolResult.ok(
                render(None if goal is None else for_model(goal, *self.goals.totals(goal)))
            )

        return ToolExecution(execute=get, approval_rule=self.name, description="Reading goal")
