"""CreateGoal: start a goal the agent works toward across turns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.describe import describe
from deftly.contract.display import GoalStartDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.goals.guard import changed, seen_id
from deftly.features.goals.service import MAIN_ONLY, GoalService
from deftly.features.goals.state import for_model, render
from deftly.policy.permissions import Mode

MAX_OBJECTIVE = 4000
"""Longer content belongs in a file the objective points to."""


class CreateGoalParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    objective: str = Field(min_length=1, description="What to achieve, as a verifiable end state.")
    completion_criterion: str | None = Field(
        None,
        alias="completionCriterion",
        description="How to tell the goal is reached (a test that passes, a file that exists).",
    )
    replace: bool = Field(False, description="Abandon the current goal and start this one instead.")


class CreateGoalTool(Tool[CreateGoalParams]):
    """Starts the session's goal. Not read-only: in manual mode the person reviews the
    goal (its `goal_start` display) before the agent commits to it."""

    name = "CreateGoal"
    title = "Set a goal"
    description = describe("create_goal.md")
    params = CreateGoalParams
    traits = ToolTraits()

    def __init__(self, goals: GoalService) -> None:
        self.goals = goals

    def resolve(self, args: CreateGoalParams) -> ToolExecution | ToolResult:
        """Refuse sub-agents; otherwise show the goal to be started."""
        if not self.goals.main:
            return ToolResult.error(MAIN_ONLY)
        seen = seen_id(self.goals)
        objective = args.objective.strip()
        criterion = (args.completion_criterion or "").strip() or None
        mode = self.goals.mode()
        display = (
            None
            if mode == Mode.AUTO
            else GoalStartDisplay(
                objective=objective,
                completion_criterion=criterion,
                mode="yolo" if mode == Mode.YOLO else "manual",
            )
        )

        async def create(ctx: ToolContext) -> ToolResult:
            if changed(self.goals, seen):
                return ToolResult.ok("Goal not created: the current goal changed.")
            if not objective:
                return ToolResult.error(
                    "Goal objective cannot be empty: say what the goal should achieve."
                )
            if len(objective) > MAX_OBJECTIVE:
                return ToolResult.error(
                    f"Goal objective cannot exceed {MAX_OBJECTIVE} characters. Put long "
                    "content in a file and reference the file path."
                )
            current = self.goals.goal
            if current is not None and current.status != "complete" and not args.replace:
                return ToolResult.error(
                    f'A goal already exists ({current.status}: "{current.objective}"). '
                    "Finish it with UpdateGoal, or call CreateGoal with replace: true to "
                    "abandon it and start this one."
                )
            goal = self.goals.create(objective, criterion)
            return ToolResult.ok(render(for_model(goal, *self.goals.totals(goal))))

        return ToolExecution(
            execute=create,
            approval_rule=self.name,
            description=f"Creating goal: {objective[:80]}",
            display=display,
        )
