"""What the permission chain decided for one call, and how it got there."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from deftly.contract.records import frozen
from deftly.policy.permissions.modes import Mode
from deftly.policy.permissions.rulebook import RuleEntry


class Verdict(StrEnum):
    """What the permission chain says of a call: run it, ask a person, or refuse it."""

    APPROVE = "approve"
    ASK = "ask"
    DENY = "deny"


class Link(StrEnum):
    """The links of the chain, in the order they are asked; the first answer wins."""

    DENY_RULES = "deny-rules"
    UNVERIFIABLE = "unverifiable"
    AUTO_MODE = "auto-mode"
    SESSION_APPROVALS = "session-approvals"
    ASK_RULES = "ask-rules"
    ALLOW_RULES = "allow-rules"
    PROTECTED_PATHS = "protected-paths"
    YOLO_MODE = "yolo-mode"
    READ_ONLY = "read-only"
    RESTORABLE_WRITE = "restorable-write"
    """Manual mode: writes that create new files or change files git or this session can
    restore (was "git-write", which approved every write in a git work tree)."""
    FALLBACK = "fallback"

    @property
    def position(self) -> int:
        """The link's place in the chain, counting from 1 (as `--explain` shows it)."""
        return CHAIN.index(self) + 1

    @property
    def label(self) -> str:
        """The link's name for people ("deny rules", "read-only inside")."""
        return _LABELS[self]


CHAIN: tuple[Link, ...] = tuple(Link)

_LABELS = {
    Link.DENY_RULES: "deny rules",
    Link.UNVERIFIABLE: "unverifiable command",
    Link.AUTO_MODE: "auto mode",
    Link.SESSION_APPROVALS: "session approvals",
    Link.ASK_RULES: "ask rules",
    Link.ALLOW_RULES: "allow rules",
    Link.PROTECTED_PATHS: "protected paths",
    Link.YOLO_MODE: "yolo mode",
    Link.READ_ONLY: "read-only inside",
    Link.RESTORABLE_WRITE: "restorable write",
    Link.FALLBACK: "fallback",
}


class Step:
    """One link's answer: a verdict (it decided) or None (it passed the call on).

    The detail of a link that passed is only written out when someone reads it (an
    explanation), so deciding stays cheap on the hot path.
    """

    __slots__ = ("_detail", "link", "verdict")

    def __init__(self, link: Link, verdict: Verdict | None, detail: str | Callable[[], str]):
        self.link = link
        self.verdict = verdict
        self._detail = detail

    @property
    def detail(self) -> str:
        """What the link found, written out on first read."""
        if not isinstance(self._detail, str):
            self._detail = self._detail()
        return self._detail

    def __repr__(self) -> str:
        return f"Step({self.link!s}, {self.verdict!s}, {self.detail!r})"


@frozen
class PermissionDecision:
    """The outcome of the chain for one call, explainable link by link."""

    tool: str
    mode: Mode
    verdict: Verdict
    link: Link
    reason: str
    """One sentence: why the deciding link decided."""
    rule: RuleEntry | None = None
    """The rule that decided, for the rule links."""
    trail: tuple[Step, ...] | Callable[[], tuple[Step, ...]] = ()
    """The links asked, or how to work them out again (only an explanation needs them)."""
    approval_rule: str = ""

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every link asked, in order, with what each said."""
        return self.trail if isinstance(self.trail, tuple) else self.trail()

    @property
    def approved(self) -> bool:
        """Whether the call may run without asking anyone."""
        return self.verdict is Verdict.APPROVE

    def summary(self) -> str:
        """One line: the tool, the verdict, the deciding link and mode, and the reason."""
        return (
            f"{self.tool}: {self.verdict} (link {self.link.position} of {len(CHAIN)}, "
            f'"{self.link}", in {self.mode} mode): {self.reason}'
        )

    def explain(self) -> str:
        """The whole story, one line per link asked, for `deftly call --explain`."""
        lines = [
            f"Permission decision for {self.tool}: {self.verdict.upper()}",
            f"  decided by link {self.link.position} of {len(CHAIN)} ({self.link}) "
            f"in {self.mode} mode",
            f"  why: {self.reason}",
            "  chain (first answer wins):",
        ]
        width = max(len(link.label) for link in CHAIN)
        for step in self.steps:
            outcome = step.verdict.upper() if step.verdict else "pass"
            label = step.link.label.ljust(width)
            lines.append(f"    {step.link.position:>2} {label}  {outcome:<7} {step.detail}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The decision as JSON for `deftly permissions --test --json`: verdict, link, reason, the
        rule that decided and every step."""
        return {
            "tool": self.tool,
            "mode": str(self.mode),
            "verdict": str(self.verdict),
            "link": str(self.link),
            "position": self.link.position,
            "reason": self.reason,
            "rule": (
                {"kind": str(self.rule.kind), "rule": self.rule.text, "origin": self.rule.origin}
                if self.rule
                else None
            ),
            "approval_rule": self.approval_rule,
            "steps": [
                {
                    "link": str(s.link),
                    "verdict": str(s.verdict) if s.verdict else None,
                    "detail": s.detail,
                }
                for s in self.steps
            ],
        }
