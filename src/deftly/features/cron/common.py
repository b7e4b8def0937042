"""What the three cron tools check alike before a call: the main agent, cron switched on."""

from __future__ import annotations

from deftly.contract.result import ToolResult
from deftly.features.cron.state import MAIN_ONLY, CronService

DISABLED = (
    "Cron scheduling is switched off here (`[cron] enabled = false` in the configuration), "
    "so no job can be scheduled, listed or deleted. Do the work now, or ask the user to "
    "switch cron on."
)


def refusal(service: CronService) -> ToolResult | None:
    """Why a cron tool cannot be used by this agent at all, or None."""
    if not service.main:
        return ToolResult.error(MAIN_ONLY)
    if not service.settings.enabled:
        return ToolResult.error(DISABLED)
    return None
