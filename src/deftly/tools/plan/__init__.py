"""Plan mode tools: EnterPlanMode, ExitPlanMode."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = []
