"""Collaboration tools: Skill (and later Agent, AskUserQuestion)."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution
from deftly.tools.collab.skill import SkillHost, SkillTool

CONTRIBUTIONS: list[ToolContribution] = [
    # Only when the runtime offers skills ([skills] enabled).
    ToolContribution.of(SkillTool, when=lambda services: SkillHost in services),
]
