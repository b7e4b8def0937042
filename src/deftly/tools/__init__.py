"""Built-in tools, one family per folder. `builtin_contributions()` lists them all."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution


def builtin_contributions() -> list[ToolContribution]:
    """Every built-in tool deftly can offer, in a stable order."""
    contributions: list[ToolContribution] = []
    return contributions
