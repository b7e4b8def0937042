"""File tools: Read, Write, Edit, Glob, Grep, ReadMediaFile."""

from __future__ import annotations

from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = []
