"""ExitPlanMode: show the plan for approval (display `plan_review`), then leave plan mode.

The review itself is done by the plan guard (a before-hook, see `mode.py`), which asks the
user through the runtime's approver; `execute` runs only once the plan is approved (or in
auto mode, without review) and turns plan mode off.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import PlanOption, PlanReviewDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Resolution, Tool, ToolContext, ToolExecution, ToolTraits
from deftly.env.base import ExecEnv
from deftly.features.plan.mode import PlanMode, PlanReview

MAX_OPTIONS = 3
MAX_LABEL = 80
MAX_PLAN_BYTES = 256 * 1024


class PlanOptionParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(
        min_length=1, max_length=MAX_LABEL, description="A short name for this approach."
    )
    description: str = Field("", description="What this approach does and what it trades off.")


class ExitPlanModeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    options: list[PlanOptionParam] | None = Field(
        None,
        min_length=1,
        max_length=MAX_OPTIONS,
        description="Alternative approaches described in the plan, for the user to pick from.",
    )


class ExitPlanModeTool(Tool[ExitPlanModeParams]):
    """Shows the plan file for the user's approval and, once approved, turns plan mode off.

    Its trait `exits_plan_mode` is what makes the plan guard run the review before the
    call; `execute` only reads the guard's `PlanReview` and leaves plan mode.
    """

    name = "ExitPlanMode"
    title = "Leave plan mode"
    description = describe("exit_plan_mode.md")
    params = ExitPlanModeParams
    traits = ToolTraits(read_only=True, exits_plan_mode=True)

    def __init__(self, env: ExecEnv, plan_mode: PlanMode) -> None:
        self.env = env
        self.plan_mode = plan_mode

    def description_vars(self) -> dict[str, object]:
        """The limits on options the description names."""
        return {"MAX_OPTIONS": MAX_OPTIONS, "MAX_LABEL": MAX_LABEL}

    async def resolve(self, args: ExitPlanModeParams) -> Resolution:
        """Read the plan file (the plan to review is the plan approved), or say what is
        missing: plan mode off, an empty plan, options with the same label."""
        # The one read in a resolve: the session's own plan file, so that the approval
        # request shows exactly the plan that will be approved.
        state = self.plan_mode
        path = state.plan_path
        if not state.active or path is None:
            return ToolResult.error(
                "ExitPlanMode works only in plan mode, and plan mode is off. Call "
                "EnterPlanMode first if you want to plan."
            )
        labels = [o.label.strip().lower() for o in args.options or []]
        if len(set(labels)) != len(labels):
            return ToolResult.error(
                "Two options have the same label; give each approach its own label."
            )
        try:
            plan = await asyncio.to_thread(self._read_plan, path)
        except FileNotFoundError:
            plan = ""
        except OSError as exc:
            return ToolResult.error(f"Could not read the plan file {path}: {exc.strerror or exc}.")
        if not plan.strip():
            return ToolResult.error(
                f"The plan file {path} is empty or missing. Write your plan there with Write, "
                "then call ExitPlanMode again."
            )
        options = [PlanOption(label=o.label, description=o.description) for o in args.options or []]
        return ToolExecution(
            accesses=Accesses.read_file(path),
            display=PlanReviewDisplay(
                plan=plan, path=str(path), options=options if len(options) >= 2 else None
            ),
            description="Presenting the plan for approval",
            approval_rule=self.name,
            execute=lambda ctx: self._exit(ctx, plan, path),
        )

    def _read_plan(self, path: Path) -> str:
        with self.env.open_read(path) as handle:
            data = handle.read(MAX_PLAN_BYTES + 1)
        text = data[:MAX_PLAN_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_PLAN_BYTES:
            text += f"\n\n[plan cut at {MAX_PLAN_BYTES // 1024} KiB]"
        return text

    def _exit(self, ctx: ToolContext, plan: str, path: Path) -> ToolResult:
        review = ctx.handoff(PlanReview)
        if not self.plan_mode.active:
            return ToolResult.error("Plan mode is already off; there is nothing to exit.")
        self.plan_mode.exit()
        if review is not None and review.reviewed:
            chosen = (
                f"Selected approach: {review.selected}. Carry out only this approach, not the "
                "other alternatives.\n"
                if review.selected
                else ""
            )
            return ToolResult.ok(
                "The user approved the plan. Plan mode is off; all tools are available again.\n"
                f"{chosen}Plan file: {path}\n\n## Approved plan\n\n{plan}"
            )
        how = review.how if review is not None else "no review was run"
        return ToolResult.ok(
            f"Plan mode is off; all tools are available again. The plan was approved "
            f"automatically ({how}): the user has NOT reviewed it. Follow the user's original "
            "instructions on whether to go ahead; if they asked you to stop after planning, "
            f"stop.\nPlan file: {path}\n\n## Plan (not reviewed by the user)\n\n{plan}"
        )
