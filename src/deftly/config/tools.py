"""`[tools]`: which tools are on, and extra tools to load."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section


class ToolsConfig(Section):
    """`[tools]`: which tools are active (allow and deny lists) and extra tool classes to load by
    `module:Class` path."""

    enabled: list[str] = Field(
        default_factory=list,
        description="Allow list: when non-empty, only these tools are active. "
        "Globs apply to mcp__ names only.",
    )
    disabled: list[str] = Field(
        default_factory=list, description="Tools to switch off. Globs only for mcp__ names."
    )
    load: list[str] = Field(
        default_factory=list, description='Extra tools by "package.module:ClassName" path.'
    )
