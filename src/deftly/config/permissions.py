"""`[permissions]`: mode, allow/ask/deny rules, extra directories.

A rule is a string (`"Bash(git status)"`) or a table that carries examples checked at
load, as Codex's execpolicy does: `{ rule = "Bash(rm -rf *)", match = ["rm -rf /abs"],
not_match = ["rm x"] }`. A failing example stops the load with the rule and the example
named.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deftly.config.base import Section

Mode = Literal["manual", "yolo", "auto"]

HARMLESS_COMMANDS = (
    "ls",
    "pwd",
    "wc",
    "head",
    "tail",
    "cat",
    "git status",
    "git diff",
    "git log",
    "git show",
)
"""The default `[permissions] harmless_commands`."""


class PermissionRule(Section):
    """A rule with examples: calls it must apply to (`match`) and must not (`not_match`).
    An example is what the rule's tool is given: a command for Bash, a path for the file
    tools, or `Tool({json arguments})`."""

    rule: str = Field(description='The rule, e.g. "Bash(rm -rf *)".')
    match: list[str] = Field(default_factory=list, description="Calls the rule must cover.")
    not_match: list[str] = Field(default_factory=list, description="Calls the rule must not cover.")


RuleItem = str | PermissionRule


class PermissionsConfig(Section):
    """`[permissions]`: the mode, the allow/ask/deny rules, extra directories the tools may reach,
    and the commands manual mode runs unasked when proven read-only."""

    mode: Mode = Field(
        "manual",
        description="manual (ask), yolo (approve most), auto (approve all but deny rules).",
    )
    allow: list[RuleItem] = Field(
        default_factory=list,
        description='Rules like "Bash(git status)", or tables { rule = ..., match = [...], '
        "not_match = [...] } whose examples are checked at load.",
    )
    ask: list[RuleItem] = Field(default_factory=list)
    deny: list[RuleItem] = Field(default_factory=list)
    additional_directories: list[str] = Field(
        default_factory=list, description="Directories outside the workspace tools may use."
    )
    harmless_commands: list[str] = Field(
        default_factory=lambda: list(HARMLESS_COMMANDS),
        description="Commands manual mode runs without asking when they only read inside "
        "the workspace: each a command word and, optionally, its subcommand (`git status`). "
        "Nothing redirected or expanded, every file named inside the workspace and neither "
        "a secret nor a control file. [] asks about every command.",
    )
