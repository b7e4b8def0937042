"""`allowed-tools:` in a skill's front matter: while that skill runs, the model may call
only those tools.

"While it runs" has no end a tool runtime can see (there is no agent loop here), so a
limit starts when the skill is loaded (by the Skill tool or by a person) and lasts until
the next skill load replaces it (a skill without `allowed-tools` lifts it), the host calls
`SkillService.end_skill()`, or the runtime closes. Loading another skill stays possible.

Entries name tools (`Read`, `mcp__github__*` globs) or, as Claude Code writes them, a tool
with a pattern (`Bash(git diff:*)`): then only calls the pattern covers fully, matched as a
permission rule is (`git diff --stat` yes, `git diff && rm x` no), are allowed. Permission
rules still decide each call the limit lets through.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from deftly.contract.records import frozen

KEYS = ("allowed-tools", "allowed_tools")


def allowed_tools(metadata: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The entries of `allowed-tools` (None when the skill sets none). A string is split
    at commas, or at spaces when it has no commas, never inside parentheses."""
    for key in KEYS:
        if key in metadata:
            raw = metadata[key]
            break
    else:
        return None
    if raw is None:  # `allowed-tools:` with nothing after it sets no limit
        return None
    if isinstance(raw, str):
        items = _split(raw, "," if "," in raw else " ")
    elif isinstance(raw, list | tuple):
        items = [str(item) for item in raw]
    else:
        items = [str(raw)]
    return tuple(item.strip() for item in items if item.strip())


def _split(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if (ch == separator or (separator == " " and ch.isspace())) and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


@frozen
class ToolLimit:
    """The tools a running skill allows."""

    skill: str
    entries: tuple[str, ...]

    @property
    def tool_patterns(self) -> tuple[str, ...]:
        """The tool-name part of each entry (`Bash` of `Bash(git diff:*)`), globs kept."""
        return tuple(entry.split("(", 1)[0].strip() for entry in self.entries)

    def allows(self, tool: str) -> bool:
        """Whether the skill lets the model call `tool` at all (some entry names it)."""
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tool_patterns)

    def patterns_for(self, tool: str) -> tuple[str, ...] | None:
        """The patterns a call to `tool` must match (None: no entry limits it to some;
        whether the tool may be called at all is `allows`)."""
        patterns: list[str] = []
        for entry in self.entries:
            name, paren, rest = entry.partition("(")
            if not fnmatch.fnmatchcase(tool, name.strip()):
                continue
            pattern = rest[:-1] if paren and rest.endswith(")") else ""
            if not pattern.strip():
                return None
            patterns.append(pattern)
        return tuple(patterns) or None

    def pattern_refusal(self, tool: str) -> str:
        """What the model is told when a call of an allowed tool falls outside every pattern the
        skill gives for it."""
        allowed = ", ".join(f"{tool}({p})" for p in self.patterns_for(tool) or ())
        return (
            f'Tool "{tool}" was not called: skill "{self.skill}" is running, and its '
            f"allowed-tools permit only {allowed} for it. Call it within those, use another "
            "of the skill's tools, or load another skill (or ask the user) if the task needs "
            "more."
        )

    def listing(self) -> str:
        """The entries as the model is shown them (`Read, Bash(git diff:*)`), or "none"."""
        return ", ".join(self.entries) if self.entries else "none"

    def announcement(self) -> str:
        """What the model is told when the skill loads."""
        return (
            f'While skill "{self.skill}" runs, only these tools may be called (its '
            f"allowed-tools): {self.listing()}. Loading another skill ends this limit."
        )

    def refusal(self, tool: str) -> str:
        """What the model is told when it calls a tool the running skill does not allow."""
        return (
            f'Tool "{tool}" was not called: skill "{self.skill}" is running, and its '
            f"allowed-tools permit only {self.listing()}. Use one of those tools, or load "
            "another skill (or ask the user) if the task needs more."
        )
