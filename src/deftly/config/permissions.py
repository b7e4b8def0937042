"""`[permissions]`: mode, allow/ask/deny rules, extra directories."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deftly.config.base import Section

Mode = Literal["manual", "yolo", "auto"]


class PermissionsConfig(Section):
    mode: Mode = Field(
        "manual",
        description="manual (ask), yolo (approve most), auto (approve all but deny rules).",
    )
    allow: list[str] = Field(default_factory=list, description='Rules like "Bash(git status)".')
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    additional_directories: list[str] = Field(
        default_factory=list, description="Directories outside the workspace tools may use."
    )
