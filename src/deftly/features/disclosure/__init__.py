"""Tools about tools: select_tools (deferred disclosure)."""

from __future__ import annotations

from deftly.config.mcp import McpConfig
from deftly.features.disclosure.select_tools import SelectTools
from deftly.registry.contribution import ToolContribution
from deftly.registry.services import Services


def _select_tools_on(services: Services) -> bool:
    config = services.find(McpConfig)
    return bool(config and config.select_tools)


CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(SelectTools, when=_select_tools_on),
]
