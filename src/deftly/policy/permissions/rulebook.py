"""The permission rules in force: `allow`, `ask` and `deny` lists, each rule with its origin.

Rules come from the config files (user first, then project), from Python
(`rt.permissions.rules.add(...)`), and session approvals are kept apart
(`SessionApprovals`). A rule that does not parse is an error at load time that names the
file and line it came from; it is never silently dropped. A rule that parses but can match
nothing (`Bash( git status)`, `Bash(npm run:* x)`, a tool no one has) is a warning, and a
rule written as a table carries examples (`match`, `not_match`) checked once the tools
are active.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from deftly.contract.errors import ConfigError
from deftly.contract.records import frozen
from deftly.contract.tool import RuleMatch, ToolExecution
from deftly.policy.rules import (
    PREFIX_SUFFIX,
    ResolvedMatcher,
    Rule,
    RuleSyntaxError,
    parse_rule,
)

log = logging.getLogger(__name__)

_HITS_KEPT = 4096
"""How many (tool, path) answers a rule book remembers before it starts afresh."""


class RuleKind(StrEnum):
    """Which list a rule is in: allow (run unasked), ask (always ask) or deny (never run)."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@frozen
class RuleEntry:
    """One rule and where it came from ("/path/config.toml:7", "Python", "session")."""

    kind: RuleKind
    rule: Rule
    origin: str
    match: tuple[str, ...] = ()
    """Examples the rule must apply to (checked at load)."""
    not_match: tuple[str, ...] = ()
    """Examples it must not apply to."""

    @property
    def text(self) -> str:
        """The rule as written (`Bash(git status)`)."""
        return self.rule.text

    def describe(self) -> str:
        """The rule for a message: its kind, its text and where it came from."""
        return f'{self.kind} rule "{self.text}" ({self.origin})'


@frozen
class RuleHit:
    """A rule that covers a call: the rule, how far it matched, a note when the answer needs one,
    and the rules that cover the other parts of a compound command with it."""

    entry: RuleEntry
    match: RuleMatch
    note: str = ""
    together: tuple[RuleEntry, ...] = ()
    """The other rules that, with `entry`, cover the call part by part."""

    @property
    def entries(self) -> tuple[RuleEntry, ...]:
        """Every rule that together covers the call, the deciding one first."""
        return (self.entry, *self.together)


def match_rule(rule: Rule, tool: str, execution: ToolExecution) -> tuple[RuleMatch, str]:
    """How far `rule` covers this call, and a note when the answer needs one.

    A tool-name-only rule covers every call of that tool. A rule with a pattern needs the
    call's own matcher; a call without one is never covered by it. A matcher that raises is
    treated as PARTIAL: enough for a deny or ask rule (fail closed), never for an allow.
    """
    if not rule.matches_tool(tool):
        return RuleMatch.NONE, ""
    if rule.args is None:
        return RuleMatch.FULL, ""
    matcher = execution.matches_rule
    if matcher is None:
        return RuleMatch.NONE, f"{tool} calls cannot be matched by a pattern, only by name"
    try:
        return RuleMatch.of(matcher(rule.args)), ""
    except Exception as exc:
        log.warning("matcher of %s failed on %r", tool, rule.args, exc_info=True)
        return RuleMatch.PARTIAL, f"the tool could not check the pattern ({exc}); fails closed"


def joint_allow_hit(
    entries: Iterable[RuleEntry], tool: str, execution: ToolExecution
) -> RuleHit | None:
    """Allow rules that each cover some parts of a call and together cover all of them
    (`git status | head -5` with `Bash(git status)` and `Bash(head *)`): a hit on the
    first, naming the others. None when the call has no parts or they do not suffice."""
    joint = execution.matches_rules
    if joint is None:
        return None
    partial = [
        entry
        for entry in entries
        if entry.rule.args is not None
        and match_rule(entry.rule, tool, execution)[0] is RuleMatch.PARTIAL
    ]
    if len(partial) < 2:
        return None
    try:
        match = RuleMatch.of(joint([entry.rule.args or "" for entry in partial]))
    except Exception:
        log.warning("joint matcher of %s failed", tool, exc_info=True)
        return None
    if match is not RuleMatch.FULL:
        return None
    return RuleHit(partial[0], RuleMatch.FULL, together=tuple(partial[1:]))


class RuleSource(Protocol):
    """A rule with examples, as `[permissions]` tables give it."""

    @property
    def rule(self) -> str:
        """The rule text."""
        ...

    @property
    def match(self) -> Sequence[str]:
        """Calls the rule must cover; checked when the rule is loaded."""
        ...

    @property
    def not_match(self) -> Sequence[str]:
        """Calls the rule must not cover; checked when the rule is loaded."""
        ...


def pattern_problems(text: str) -> list[str]:
    """Why a rule that parses can still match nothing (or much more than it seems)."""
    stripped = text.strip()
    if "(" not in stripped or not stripped.endswith(")"):
        return []
    tool, _, rest = stripped.partition("(")
    args = rest[:-1]
    problems: list[str] = []
    if not args.strip():
        problems.append(
            f'has an empty pattern, so it covers every {tool.strip()} call; write "{tool.strip()}" '
            "if that is meant, or put the pattern between the parentheses."
        )
        return problems
    if args != args.strip():
        problems.append(
            "has spaces at the start or end of its pattern, which no call has (commands and "
            f'paths are matched trimmed), so it never applies. Write "{tool.strip()}('
            f'{args.strip()})".'
        )
    inner = args.strip().removesuffix(PREFIX_SUFFIX)
    if PREFIX_SUFFIX in inner:
        problems.append(
            f'has "{PREFIX_SUFFIX}" before the end of its pattern; "{PREFIX_SUFFIX}" means '
            '"followed by anything" only at the very end (e.g. "Bash(npm run test:*)"), '
            "elsewhere it is a colon and a star. Write `*` where anything may follow."
        )
    return problems


def covers(kind: RuleKind, match: RuleMatch) -> bool:
    """Deny and ask rules restrict: a partial match is enough. Allow needs a full match."""
    if kind is RuleKind.ALLOW:
        return match is RuleMatch.FULL
    return match is not RuleMatch.NONE


@dataclass
class RuleBook:
    """The configured rules, in the order they were given (user file, project file, Python).

    Change them with `add` and `remove` (the lists per kind are kept ready for the chain).
    """

    entries: list[RuleEntry] = field(default_factory=list)
    version: int = field(default=0, compare=False)
    """Goes up with every change, so a decision knows whether the rules moved under it."""
    _by_kind: dict[RuleKind, list[RuleEntry]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _by_kind_key: tuple[int, int, int] = field(
        default=(-1, 0, 0), init=False, repr=False, compare=False
    )
    _by_tool: dict[tuple[RuleKind, str], tuple[RuleEntry, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _hits: dict[tuple[RuleKind, str, ResolvedMatcher], RuleHit | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    warnings: list[str] = field(default_factory=list, compare=False)
    """Rules that parse but can match nothing, each said with where it is and why."""

    @classmethod
    def from_lists(
        cls,
        *,
        allow: Iterable[str | RuleSource] = (),
        ask: Iterable[str | RuleSource] = (),
        deny: Iterable[str | RuleSource] = (),
        origin: Callable[[str], str] = lambda text: "configuration",
        section: str = "[permissions]",
    ) -> RuleBook:
        """Parse every rule; the first bad one raises ConfigError naming where it is."""
        book = cls()
        for kind, items in ((RuleKind.DENY, deny), (RuleKind.ASK, ask), (RuleKind.ALLOW, allow)):
            for item in items:
                text = item if isinstance(item, str) else item.rule
                where = origin(text)
                try:
                    rule = parse_rule(text)
                except RuleSyntaxError as exc:
                    raise ConfigError(
                        f"{where}: the {section} {kind} rule {text!r} is not valid: {exc}. "
                        'Write a rule as "Tool" or "Tool(pattern)", e.g. "Bash(git status)".'
                    ) from None
                match = () if isinstance(item, str) else tuple(item.match)
                not_match = () if isinstance(item, str) else tuple(item.not_match)
                entry = RuleEntry(kind, rule, where, match, not_match)
                book.entries.append(entry)
                book.warnings += [
                    f"{where}: the {section} {kind} rule {text!r} {problem}"
                    for problem in pattern_problems(text)
                ]
        return book

    def unknown_tools(self, known: Collection[str]) -> list[str]:
        """Warnings for rules naming a tool no active or known tool has (MCP names and
        globs are left alone: servers may come and go)."""
        out: list[str] = []
        for entry in self.entries:
            tool = entry.rule.tool
            if tool.startswith("mcp__") or any(ch in tool for ch in "*?[]{}") or tool in known:
                continue
            close = difflib.get_close_matches(tool, sorted(known), n=1)
            hint = f' Did you mean "{close[0]}"?' if close else ""
            out.append(
                f'{entry.origin}: the {entry.kind} rule "{entry.text}" names the tool "{tool}", '
                f"which no tool here has, so it never applies.{hint}"
            )
        return out

    def add(self, kind: RuleKind | str, text: str, *, origin: str = "Python") -> RuleEntry:
        """Add one rule at run time; raises RuleSyntaxError if it does not parse."""
        entry = RuleEntry(RuleKind(kind), parse_rule(text), origin)
        self.entries.append(entry)
        self.version += 1
        return entry

    def remove(self, kind: RuleKind | str, text: str) -> bool:
        """Remove the rules of this kind with this text; True if any was there."""
        wanted = RuleKind(kind)
        before = len(self.entries)
        self.entries = [e for e in self.entries if not (e.kind is wanted and e.text == text)]
        self.version += 1
        return len(self.entries) != before

    def of_kind(self, kind: RuleKind) -> list[RuleEntry]:
        """The rules of one kind, in the order they were loaded (grouped once per change of the
        book)."""
        grouped = self._by_kind
        version, ident, size = self._by_kind_key
        entries = self.entries
        if (
            grouped is None
            or version != self.version
            or ident != id(entries)
            or size != len(entries)
        ):
            grouped = {k: [] for k in RuleKind}
            for entry in entries:
                grouped[entry.kind].append(entry)
            self._by_kind = grouped
            self._by_tool = {}
            self._hits = {}
            self._by_kind_key = (self.version, id(entries), len(entries))
        return grouped[kind]

    def for_tool(self, kind: RuleKind, tool: str) -> tuple[RuleEntry, ...]:
        """The rules of one kind whose tool part names `tool`, in order: worked out once
        per tool and change of the book, so a call matches only the rules that concern it."""
        self.of_kind(kind)  # regroups (and clears the per-tool lists) after a change
        key = (kind, tool)
        found = self._by_tool.get(key)
        if found is None:
            found = tuple(e for e in self.of_kind(kind) if e.rule.matches_tool(tool))
            self._by_tool[key] = found
        return found

    def __iter__(self) -> Iterator[RuleEntry]:
        return iter(list(self.entries))

    def __len__(self) -> int:
        return len(self.entries)

    def first_hit(self, kind: RuleKind, tool: str, execution: ToolExecution) -> RuleHit | None:
        """The first rule of `kind` that covers the call (an allow rule must cover all of it, a deny
        or ask rule any part), or None. Remembered per tool and path matcher until the book
        changes: a call on a path seen before costs one dictionary look-up."""
        entries = self.for_tool(kind, tool)
        if not entries:
            return None
        matcher = execution.matches_rule
        if not isinstance(matcher, ResolvedMatcher):
            return self._first_hit(entries, kind, tool, execution)
        key = (kind, tool, matcher)
        try:
            return self._hits[key]
        except KeyError:
            pass
        hit = self._first_hit(entries, kind, tool, execution)
        if len(self._hits) >= _HITS_KEPT:
            self._hits.clear()
        self._hits[key] = hit
        return hit

    @staticmethod
    def _first_hit(
        entries: Sequence[RuleEntry], kind: RuleKind, tool: str, execution: ToolExecution
    ) -> RuleHit | None:
        for entry in entries:
            match, note = match_rule(entry.rule, tool, execution)
            if covers(kind, match):
                return RuleHit(entry, match, note)
        return None


@dataclass
class SessionApprovals:
    """Rules remembered when a person chose "yes, for this session" (allow rules, FULL only)."""

    entries: list[RuleEntry] = field(default_factory=list)

    def add(self, approval_rule: str) -> RuleEntry | None:
        """Remember a call's `approval_rule`; None (and a log line) if it does not parse."""
        try:
            rule = parse_rule(approval_rule)
        except RuleSyntaxError:
            log.warning("cannot remember approval rule %r: it does not parse", approval_rule)
            return None
        for entry in self.entries:
            if entry.rule == rule:
                return entry
        entry = RuleEntry(RuleKind.ALLOW, rule, "approved for this session")
        self.entries.append(entry)
        return entry

    def clear(self) -> None:
        """Forget every session approval."""
        self.entries.clear()

    @property
    def rules(self) -> list[str]:
        """The remembered rules' texts, oldest first."""
        return [e.text for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def first_hit(self, tool: str, execution: ToolExecution) -> RuleHit | None:
        """The first remembered rule that covers the whole call, or None."""
        for entry in self.entries:
            match, note = match_rule(entry.rule, tool, execution)
            if covers(RuleKind.ALLOW, match):
                return RuleHit(entry, match, note)
        return None
