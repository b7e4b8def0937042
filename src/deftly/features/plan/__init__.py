"""Plan mode tools: EnterPlanMode, ExitPlanMode (state and guard in `mode.py`)."""

from __future__ import annotations

from deftly.features.plan.enter_plan_mode import EnterPlanModeTool
from deftly.features.plan.exit_plan_mode import ExitPlanModeTool
from deftly.features.plan.mode import PlanGuard, PlanMode, PlanReview
from deftly.registry.contribution import ToolContribution

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
