"""`[hooks]`: external commands run before and after tool calls.

    [[hooks.PreToolUse]]
    matcher = "Bash|Write"        # a regular expression for the whole tool name; "" or "*": all
    command = "python3 .deftly/check.py"
    timeout = 10                  # seconds (default 30, at most 600)

    [[hooks.PostToolUse]]
    command = "ruff format --quiet ."

Lists from the user file and the project file are concatenated (user first).
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from deftly.config.base import Section


class CommandHookConfig(Section):
    """One external hook: a shell command run for the calls whose tool name `matcher` matches, given
    the call as JSON on stdin."""

    matcher: str = Field(
        "",
        description='A regular expression matched against the whole tool name ("" or "*": all).',
    )
    command: str = Field(description="A shell command; it gets the call as JSON on stdin.")
    timeout: float = Field(30, gt=0, le=600, description="Seconds before the hook is stopped.")

    @field_validator("matcher")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        value = value.strip()
        if value in ("", "*"):
            return value
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(
                f"matcher {value!r} is not a valid regular expression: {exc}"
            ) from None
        return value

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("command is empty; give the shell command to run")
        return value


class HooksConfig(Section):
    """`[hooks]`: the external commands run before (`PreToolUse`, which may block a call) and after
    (`PostToolUse`) tool calls."""

    pre_tool_use: list[CommandHookConfig] = Field(
        default_factory=list,
        alias="PreToolUse",
        description="Commands run before a call; exit 2 or a JSON deny blocks it.",
    )
    post_tool_use: list[CommandHookConfig] = Field(
        default_factory=list,
        alias="PostToolUse",
        description="Commands run after a call ran; they get its result.",
    )
