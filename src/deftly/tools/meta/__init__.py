"""Tools about tools: select_tools (deferred disclosure)."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = []
