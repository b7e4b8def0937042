"""Built-in tools, one family per folder. `builtin_contributions()` lists them all."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution
from deftly.tools import collab, file, meta, plan, shell


def builtin_contributions() -> list[ToolContribution]:
    """Every built-in tool deftly can offer, in a stable order."""
    families = (file, shell, plan, collab, meta)
    return [contribution for family in families for contribution in family.CONTRIBUTIONS]
