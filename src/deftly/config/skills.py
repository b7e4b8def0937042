"""`[skills]`: where skills are found, which are switched off, and how they are listed."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section


class SkillsConfig(Section):
    """`[skills]`: whether skills are found and offered, extra folders to look in, and skills to
    switch off."""

    enabled: bool = Field(
        True, description="Find skills and offer the Skill tool. false switches skills off."
    )
    extra_dirs: list[str] = Field(
        default_factory=list,
        description="More skill directories ('~' is the home directory; relative paths start "
        "at the project root). They rank below project and user skills.",
    )
    disabled: list[str] = Field(
        default_factory=list,
        description="Skill names to switch off (case-insensitive; '*' and '?' allowed).",
    )
    builtin: bool = Field(True, description="Offer the skills shipped with deftly.")
    packages: bool = Field(
        True,
        description="Offer skills from installed packages (entry points 'deftly.features.skills').",
    )
    description_chars: int = Field(
        250, ge=20, le=4_000, description="Longest skill description in the model's listing."
    )
    listing_chars: int = Field(
        12_000,
        ge=500,
        le=200_000,
        description="Longest model listing; skills beyond it are named without a description.",
    )
    max_file_kb: int = Field(
        256,
        ge=1,
        le=10_240,
        description="Largest skill file read, in KiB; larger ones are skipped.",
    )
