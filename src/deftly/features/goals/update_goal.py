"""UpdateGoal: resume, complete or block the goal; complete and blocked end the turn."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.goals.guard import changed, seen_id
from deftly.features.goals.service import MAIN_ONLY, GoalService

INVALID_STATUS = "Invalid goal status. Use `active`, `complete`, or `blocked`."

_VERB = {"active": "resumed", "complete": "completed", "blocked": "blocked"}

_FINAL = {
    "complete": (
        "The turn ends here. Write a concise final message for the user in your next reply: "
        "state that the goal is complete, summarize the main work done, and mention the "
        "checks you ran. Do not call more goal tools."
    ),
    "blocked": (
        "The turn ends here. Write a concise final message for the user in your next reply: "
        "state that the goal is blocked, explain the concrete blocker, and say what input "
        "or change is needed before work can go on. Do not call more goal tools."
    ),
}


class UpdateGoalParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: Literal["active", "complete", "blocked"] = Field(
        description=(
            "active: resume a paused or blocked goal; complete: the completion criterion "
            "is met; blocked: you cannot go on without the user."
        )
    )


class UpdateGoalTool(Tool[UpdateGoalParams]):
    """Changes the goal's status. Completing or blocking it ends the turn: the work is
    over, and the model's next reply is its final message to the user."""

    name = "UpdateGoal"
    title = "Update the goal"
    description = describe("update_goal.md")
    params = UpdateGoalParams
    traits = ToolTraits(read_only=True)

    def __init__(self, goals: GoalService) -> None:
        self.goals = goals

    def resolve(self, args: UpdateGoalParams) -> ToolExecution | ToolResult:
        """Refuse sub-agents and unknown statuses; a call that ends an active goal runs
        last in its batch."""
        if not self.goals.main:
            return ToolResult.error(MAIN_ONLY)
        status = str(args.status)
        if status not in _VERB:
            return ToolResult.error(INVALID_STATUS)
        goal = self.goals.goal
        seen = seen_id(self.goals)
        ends = status != "active" and goal is not None and goal.status == "active"

        async def update(ctx: ToolContext) -> ToolResult:
            verb = _VERB[status]
            current = self.goals.goal
            if current is None:
                missing = "no current goal" if status == "active" else "no active goal"
                return ToolResult.ok(f"Goal not {verb}: {missing}.")
            if status != "active" and current.status != "active":
                return ToolResult.ok(
                    f"Goal not {verb}: no active goal (the current goal is {current.status})."
                )
            if changed(self.goals, seen):
                return ToolResult.ok(f"Goal not {verb}: the current goal changed.")
            if status == "active":
                if current.status == "active":
                    return ToolResult.ok("Goal resumed (it was already active).")
                if self.goals.over_budget(current):
                    return ToolResult.ok(
                        "Goal not resumed: it has used up its budget. Raise the budget with "
                        "SetGoalBudget first, then resume it."
                    )
                self.goals.set_status("active")
                return ToolResult.ok("Goal resumed.")
            worked = self.goals.worked(current)
            self.goals.set_status(status, "completed" if status == "complete" else "blocked")
            head = "Goal completed successfully." if status == "complete" else "Goal blocked."
            return ToolResult.ok(f"{head}\n{worked}\n\n{_FINAL[status]}", stop_turn=True)

        return ToolExecution(
            execute=update,
            approval_rule=self.name,
            description=f"Setting goal status: {status}",
            stop_batch_after_this=ends,
        )
