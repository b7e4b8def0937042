"""Features: one capability per folder (its tools, services, hooks and injections).

`builtin_contributions()` lists every built-in tool of every feature, in a stable order.
"""

from __future__ import annotations

from deftly.features import disclosure, files, plan, shell, skills
from deftly.registry.contribution import ToolContribution


def builtin_contributions() -> list[ToolContribution]:
    """Every built-in tool deftly can offer, in a stable order."""
    families = (files, shell, plan, skills, disclosure)
    return [contribution for family in families for contribution in family.CONTRIBUTIONS]
