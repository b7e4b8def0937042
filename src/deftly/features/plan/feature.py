"""The plan feature: EnterPlanMode, ExitPlanMode, and the guard that holds plan mode.

Agent step: the agent's own `PlanMode` (its plan files in the session directory), the
`PlanGuard` before-hook and its grant on the agent's permission gate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from deftly.contract.identity import MAIN_AGENT
from deftly.execution.hooks import HookOrder
from deftly.features.api import AgentContext, Feature
from deftly.features.plan import CONTRIBUTIONS
from deftly.features.plan.mode import PlanGuard, PlanMode
from deftly.registry.contribution import ToolContribution


class PlanFeature(Feature):
    """Plan mode for each agent."""

    name: ClassVar[str] = "plan"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_agent(self, ctx: AgentContext) -> None:
        plans = ctx.session.session_dir / "plans"
        if ctx.agent_id != MAIN_AGENT:
            plans = plans / ctx.agent_id
        plan_mode = PlanMode(plans)
        ctx.session.workspace.add_directory(plan_mode.plans_dir)
        guard = PlanGuard(plan_mode, ctx.gate, lambda: ctx.mode)
        ctx.closers.add_sync(ctx.before_hooks.add("plan-mode", guard, order=HookOrder.PLAN_GUARD))
        ctx.gate.grants.append(guard.grant)
        ctx.closers.add_sync(lambda: ctx.gate.grants.remove(guard.grant))
        ctx.services.provide(plan_mode)
        ctx.closers.add_sync(_keep_plan_state(ctx, plan_mode))


class PlanState(BaseModel):
    """One agent's plan mode as kept in the session store."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    active: bool = False
    plan_path: str | None = None
    next_number: int = 1


def _keep_plan_state(ctx: AgentContext, plan_mode: PlanMode) -> Callable[[], None]:
    """Restore the agent's saved plan mode (a resumed session is still planning), then
    save it at every change; returns the way to stop saving."""
    slot = ctx.session.store.slot(f"plan.{ctx.agent_id}", PlanState)
    saved = slot.get()
    plan_mode._numbers = itertools.count(saved.next_number)
    if saved.active and saved.plan_path:
        plan_mode.enter()
        plan_mode.plan_path = Path(saved.plan_path)

    def save(active: bool) -> None:
        number = int(plan_mode.plan_path.stem.rsplit("-", 1)[-1]) if plan_mode.plan_path else 0
        slot.set(
            PlanState(
                active=active,
                plan_path=str(plan_mode.plan_path) if plan_mode.plan_path else None,
                next_number=max(saved.next_number, number + 1),
            )
        )

    return plan_mode.on_change(save)


FEATURE = PlanFeature()
