"""Shell tools: Bash and the background-task tools (TaskList, TaskOutput, TaskStop, WaitFor)."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = []
