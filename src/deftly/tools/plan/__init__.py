"""Plan mode tools: EnterPlanMode, ExitPlanMode (state and guard in `mode.py`)."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution
from deftly.tools.plan.enter_plan_mode import EnterPlanModeTool
from deftly.tools.plan.exit_plan_mode import ExitPlanModeTool
from deftly.tools.plan.mode import PlanGuard, PlanMode, PlanReview

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(EnterPlanModeTool, requires=["fs"]),
    ToolContribution.of(ExitPlanModeTool, requires=["fs"]),
]

__all__ = [
    "CONTRIBUTIONS",
    "EnterPlanModeTool",
    "ExitPlanModeTool",
    "PlanGuard",
    "PlanMode",
    "PlanReview",
]
