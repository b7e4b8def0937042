"""What a skill is once found: its definition, where it came from, and why others were not.

A skill is a Markdown manual (a `SKILL.md` in its own folder, or a loose `*.md` file at the
top of a skill root) that can be loaded into a model's context at any time. The loaded
text tells the model how to do one job; the files beside `SKILL.md` are its payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from deftly.contract.records import frozen

SkillSource: TypeAlias = Literal["project", "user", "extra", "package", "builtin"]

# Highest precedence first: a project skill beats a user skill of the same name, and so on.
SOURCE_ORDER: tuple[SkillSource, ...] = ("project", "user", "extra", "package", "builtin")
SOURCE_TITLES: Mapping[SkillSource, str] = {
    "project": "Project",
    "user": "User",
    "extra": "Extra",
    "package": "Packages",
    "builtin": "Built-in",
}

# `prompt` and `inline` are the same thing: text loaded into the conversation. `flow`
# skills are started by a person only; `reference` skills are listed but never loaded.
SUPPORTED_TYPES = frozenset({"prompt", "inline", "flow", "reference"})
INLINE_TYPES = frozenset({"prompt", "inline"})
USER_TYPES = INLINE_TYPES | {"flow"}

Trigger: TypeAlias = Literal["user-slash", "model-tool", "nested-skill"]

SkipKind: TypeAlias = Literal[
    "invalid",
    "unsupported-type",
    "too-large",
    "unreadable",
    "shadowed",
    "disabled",
    "loop",
    "refused",
]


@frozen
class Skill:
    """One usable skill.

    `path` is the Markdown file, `dir` the folder its payload lives in (for a flat skill,
    the root it sits in). `metadata` keeps every front-matter key, JSON-safe, so tools and
    hosts can read fields deftly itself gives no meaning to.
    """

    name: str
    description: str
    path: Path
    dir: Path
    source: SkillSource
    content: str
    type: str = "prompt"
    arguments: tuple[str, ...] = ()
    when_to_use: str | None = None
    argument_hint: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    is_sub_skill: bool = False
    package: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The lookup key: names are matched without regard to case."""
        return normalize_name(self.name)

    @property
    def is_inline(self) -> bool:
        """Whether loading the skill adds its text to the conversation (types `prompt` and
        `inline`)."""
        return self.type in INLINE_TYPES

    @property
    def user_activatable(self) -> bool:
        """May a person load it (a slash command, `deftly skills render`, an MCP prompt)?"""
        return self.type in USER_TYPES

    @property
    def model_invocable(self) -> bool:
        """May the model load it with the Skill tool?"""
        return self.is_inline and not self.disable_model_invocation

    def summary(self) -> dict[str, Any]:
        """The JSON shape `deftly skills list --json` prints."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
            "dir": str(self.dir),
            "type": self.type,
            "arguments": list(self.arguments),
            "when_to_use": self.when_to_use,
            "model_invocable": self.model_invocable,
            "user_invocable": self.user_invocable and self.user_activatable,
            "is_sub_skill": self.is_sub_skill,
            "package": self.package,
        }


@frozen
class SkippedSkill:
    """A file or folder that did not become a skill, and why (never fatal)."""

    path: str
    reason: str
    kind: SkipKind = "invalid"
    source: SkillSource | None = None

    def summary(self) -> dict[str, Any]:
        """The skipped entry as JSON for `deftly skills list --json`."""
        return {"path": self.path, "reason": self.reason, "kind": self.kind, "source": self.source}


def normalize_name(name: str) -> str:
    """The form skill names are compared in: case-folded, so `Fix-Lint` finds `fix-lint`."""
    return name.casefold()


def sort_key(name: str) -> tuple[str, str]:
    """Case-insensitive, lower case first on ties (close to a locale collation)."""
    return (name.casefold(), name.swapcase())
