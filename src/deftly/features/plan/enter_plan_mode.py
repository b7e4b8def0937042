"""EnterPlanMode: switch to plan mode, with a fresh plan file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.contract.traits import traits_of
from deftly.env.base import ExecEnv
from deftly.features.plan.mode import PlanMode
from deftly.registry.offer import NOTHING_OFFERED, ToolOffer


class EnterPlanModeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EnterPlanModeTool(Tool[EnterPlanModeParams]):
    """Turns plan mode on for the session, with a fresh plan file the model writes its plan to
    (read-only: it changes no workspace file, so it needs no approval)."""

    name = "EnterPlanMode"
    title = "Enter plan mode"
    description = describe("enter_plan_mode.md")
    params = EnterPlanModeParams
    traits = ToolTraits(read_only=True, idempotent=True)

    def __init__(
        self, env: ExecEnv, plan_mode: PlanMode, offer: ToolOffer = NOTHING_OFFERED
    ) -> None:
        self.env = env
        self.plan_mode = plan_mode
        self.offer = offer

    def description_vars(self) -> dict[str, object]:
        """The refusals of plan mode that concern tools the model is offered now (stopping
        tasks, scheduling work), one bullet each; nothing for tools it does not have."""
        return {"REFUSED_WHILE_PLANNING": "".join(f"\n- {line}" for line in self._refused())}

    def _refused(self) -> list[str]:
        lines: list[str] = []
        stoppers = self._offered(lambda traits: traits.stops_tasks)
        if stoppers:
            lines.append(f"Stopping background tasks ({stoppers}) is refused.")
        schedulers = self._offered(lambda traits: traits.schedules_work)
        if schedulers:
            lines.append(
                f"Creating or deleting scheduled jobs ({schedulers}) is refused: that work "
                "would run after planning, unapproved."
            )
        return lines

    def _offered(self, has: Callable[[ToolTraits], bool]) -> str:
        """The offered tools with a trait, by name ("" when none)."""
        names = []
        for entry in self.offer.entries():
            traits = traits_of(entry.tool)
            if traits is not None and has(traits):
                names.append(entry.name)
        return ", ".join(sorted(names))

    def resolve(self, args: EnterPlanModeParams) -> ToolExecution:
        """Enter plan mode; touches no file until it runs (then only the plans directory)."""
        return ToolExecution(
            accesses=Accesses.none(),
            description="Entering plan mode",
            approval_rule=self.name,
            execute=self._enter,
        )

    async def _enter(self, ctx: ToolContext) -> ToolResult:
        state = self.plan_mode
        if state.active:
            return ToolResult.ok(
                f"Plan mode is already on. Plan file: {state.plan_path}\n"
                "Write the plan there and call ExitPlanMode when it is ready."
            )
        try:
            await asyncio.to_thread(self.env.make_dirs, state.plans_dir)
        except OSError as exc:
            return ToolResult.error(
                f"Could not enter plan mode: the plans directory {state.plans_dir} cannot be "
                f"created ({exc.strerror or exc})."
            )
        path = state.enter()
        return ToolResult.ok(
            "Plan mode is on.\n"
            f"Plan file: {path}\n\n"
            "1. Investigate with read-only tools (Read, Grep, Glob); use Bash only to look.\n"
            "2. Work out a concrete, step-by-step plan.\n"
            "3. Write it to the plan file with Write (or Edit).\n"
            "4. Call ExitPlanMode to have the user review and approve it.\n\n"
            "Until the plan is approved, Write and Edit may only write the plan file."
        )
