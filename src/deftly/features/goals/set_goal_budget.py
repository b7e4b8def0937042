"""SetGoalBudget: cap the goal's turns, tokens or wall time."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.goals.budget import BudgetUnit, parse_budget, unreasonable
from deftly.features.goals.guard import changed, seen_id
from deftly.features.goals.service import MAIN_ONLY, GoalService
from deftly.features.goals.state import reached


class SetGoalBudgetParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: float = Field(gt=0, description="How much: a count of turns or tokens, or a time.")
    unit: BudgetUnit = Field(description="What `value` counts.")


class SetGoalBudgetTool(Tool[SetGoalBudgetParams]):
    """Sets one budget of the goal; the agent loop ends a turn once a budget is used up. A
    budget the goal has already reached blocks the goal and ends the turn at once."""

    name = "SetGoalBudget"
    title = "Set the goal's budget"
    description = describe("set_goal_budget.md")
    params = SetGoalBudgetParams
    traits = ToolTraits(read_only=True)

    def __init__(self, goals: GoalService) -> None:
        self.goals = goals

    def _reached_now(self, measure: str, limit: int) -> bool:
        goal = self.goals.goal
        if goal is None:
            return False
        tokens, ms = self.goals.totals(goal)
        used = {"turns": goal.turns_used, "tokens": tokens, "wall_ms": ms}[measure]
        return used >= limit

    def resolve(self, args: SetGoalBudgetParams) -> ToolExecution | ToolResult:
        """Refuse sub-agents; a budget already reached makes the call the batch's last."""
        if not self.goals.main:
            return ToolResult.error(MAIN_ONLY)
        limit = parse_budget(args.value, args.unit)
        seen = seen_id(self.goals)
        already = limit is not None and self._reached_now(limit.measure, limit.limit)

        async def set_budget(ctx: ToolContext) -> ToolResult:
            if self.goals.goal is None:
                return ToolResult.ok("Goal budget not set: no current goal.")
            if changed(self.goals, seen):
                return ToolResult.ok("Goal budget not set: the current goal changed.")
            if limit is None:
                return ToolResult.ok(unreasonable(args.value, args.unit))
            goal = self.goals.set_budget(limit)
            assert goal is not None
            if not any(reached(goal, *self.goals.totals(goal)).values()):
                return ToolResult.ok(f"Goal budget set: {limit.text}.")
            if goal.status != "active":
                return ToolResult.ok(
                    f"Goal budget set: {limit.text}. The goal has already reached it; it "
                    f"stays {goal.status}."
                )
            worked = self.goals.worked(goal)
            self.goals.set_status("blocked", f"budget reached ({limit.text})")
            return ToolResult.ok(
                f"Goal budget set: {limit.text}. The goal has already reached this budget "
                f"and will stop now; it is blocked. {worked}",
                stop_turn=True,
            )

        return ToolExecution(
            execute=set_budget,
            approval_rule=self.name,
            description=f"Setting goal budget: {args.value:g} {args.unit}",
            stop_batch_after_this=already,
        )
