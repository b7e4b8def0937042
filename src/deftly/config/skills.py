"""`[skills]`: where skills are found."""

from __future__ import annotations

from deftly.config.base import Section


class SkillsConfig(Section):
    pass
