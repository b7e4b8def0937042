"""Collaboration tools: Skill (and later Agent, AskUserQuestion)."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = []
