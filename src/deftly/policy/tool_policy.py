"""Which tools are switched on: `[tools] enabled` / `disabled` and a profile's lists.

Globs apply to MCP tools only (`mcp__github__*`); a built-in must be named in full. A
pattern that could never match anything is reported, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from deftly.contract.records import frozen

_MAGIC = frozenset("*?[]{}")
MCP_PREFIX = "mcp__"

Source = Literal["builtin", "plugin", "user", "mcp"]
IssueKind = Literal["unknown-tool", "wildcard-not-mcp", "incomplete-mcp-name"]


def has_glob(pattern: str) -> bool:
    """Whether a tool pattern has glob characters (only MCP names may use them)."""
    return any(ch in _MAGIC for ch in pattern)


def _listed(patterns: Iterable[str], name: str, source: Source) -> bool:
    if source == "mcp":
        from wcmatch import fnmatch as wcfnmatch  # ~10 ms to import: only for MCP globs

        return any(
            p.startswith(MCP_PREFIX)
            and wcfnmatch.fnmatch(name, p, flags=wcfnmatch.BRACE | wcfnmatch.CASE)
            for p in patterns
        )
    return name in patterns


@frozen
class ToolPolicy:
    """An allow list (None: everything) and a deny list."""

    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()

    @classmethod
    def from_lists(cls, enabled: Sequence[str] | None, disabled: Sequence[str] = ()) -> ToolPolicy:
        """A policy from config lists: an empty `enabled` list means every tool."""
        return cls(tuple(enabled) if enabled else None, tuple(disabled))

    def is_active(self, name: str, source: Source = "builtin") -> bool:
        """Whether the tool `name` from `source` is switched on: on the allow list (when there is
        one) and not on the deny list."""
        if self.enabled is not None and not _listed(self.enabled, name, source):
            return False
        return not _listed(self.disabled, name, source)


@frozen
class PatternIssue:
    """A tool pattern that can never match as written: unknown, a glob on a non-MCP name, or an MCP
    server name without its tool part."""

    pattern: str
    kind: IssueKind
    field: str = ""

    def message(self, context: str = "the [tools] config") -> str:
        """What is wrong with the pattern and how to write it, naming where it was found
        (`context`)."""
        where = f"{context} {self.field}".strip()
        if self.kind == "incomplete-mcp-name":
            return (
                f'Tool pattern "{self.pattern}" in {where} names no tool; '
                f'write "{self.pattern.rstrip("_")}__*" to match every tool of that MCP server.'
            )
        if self.kind == "wildcard-not-mcp":
            return (
                f'Tool pattern "{self.pattern}" in {where} uses wildcards, which only apply to '
                'MCP tools (names starting with "mcp__"); built-in tools must be named in full.'
            )
        return (
            f'Tool pattern "{self.pattern}" in {where} does not match any known tool '
            "(names are case-sensitive); it has no effect."
        )


def find_inactive_patterns(
    patterns: Iterable[str],
    is_known: Callable[[str], bool] | None = None,
    *,
    field: str = "",
) -> list[PatternIssue]:
    """The patterns that can never match anything, each with why."""
    issues: list[PatternIssue] = []
    for pattern in patterns:
        if pattern.startswith(MCP_PREFIX):
            if not has_glob(pattern) and "__" not in pattern[len(MCP_PREFIX) :]:
                issues.append(PatternIssue(pattern, "incomplete-mcp-name", field))
            continue
        if has_glob(pattern):
            issues.append(PatternIssue(pattern, "wildcard-not-mcp", field))
        elif is_known is not None and not is_known(pattern):
            issues.append(PatternIssue(pattern, "unknown-tool", field))
    return issues
