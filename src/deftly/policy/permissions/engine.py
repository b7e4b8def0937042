"""The permission engine: one chain of links decides approve / ask / deny for a call.

The chain, first answer wins:

 1. deny rules            a deny rule covers the call (fully or partly)    -> deny
 2. auto mode             mode is auto                                     -> approve
 3. session approvals     a "yes, for this session" covers it fully (or    -> approve
                          several cover its parts together)
 4. ask rules             an ask rule covers it (fully or partly)          -> ask
 5. allow rules           an allow rule covers it fully, or allow rules    -> approve
                          and session approvals cover its parts together
 6. secret or .git paths  it touches a secret file or git's control files  -> ask
 7. yolo mode             mode is yolo                                     -> approve
 8. read-only inside      a read-only tool touching only the workspace     -> approve
 9. git work tree write   Write/Edit inside the workspace, a git work tree -> approve
10. fallback                                                               -> ask

Nothing can override a deny: it is the first link. The engine only decides; the permission
gate (execution layer) acts on the decision and asks a person through an `Approver`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from deftly.contract.accesses import FileAccess
from deftly.contract.tool import RuleMatch, ToolExecution, ToolTraits
from deftly.policy.paths import Workspace, real_path
from deftly.policy.permissions.decision import Link, PermissionDecision, Step, Verdict
from deftly.policy.permissions.git import GitTree, find_git_tree, has_git_component, is_within
from deftly.policy.permissions.modes import Mode, parse_mode
from deftly.policy.permissions.rulebook import (
    RuleBook,
    RuleHit,
    RuleKind,
    SessionApprovals,
    joint_allow_hit,
)
from deftly.policy.sensitive import private_key_reason, sensitive_reason

GIT_WRITE_TOOLS = frozenset({"Write", "Edit"})

ModeListener = Callable[[Mode, Mode], None]
_PLAIN = ToolTraits()


@dataclass(frozen=True, slots=True)
class _Call:
    """One call as the links see it."""

    tool: str
    execution: ToolExecution
    traits: ToolTraits
    mode: Mode
    deny_checked: bool

    @property
    def files(self) -> tuple[FileAccess, ...]:
        accesses = self.execution.accesses
        return accesses.files if accesses is not None else ()


_Answer: TypeAlias = tuple[Verdict, str, RuleHit | None]
_Check: TypeAlias = Callable[[_Call], _Answer | None]
_Passing: TypeAlias = Callable[[_Call], str]


class PermissionEngine:
    """Decides for one workspace; holds the mode, the rules and the session approvals."""

    def __init__(
        self,
        workspace: Workspace,
        rules: RuleBook | None = None,
        mode: Mode | str = Mode.MANUAL,
    ) -> None:
        self.workspace = workspace
        self.rules = rules if rules is not None else RuleBook()
        self.session = SessionApprovals()
        self._mode = parse_mode(mode)
        self._listeners: list[ModeListener] = []
        self._git: tuple[GitTree | None, Path] | None = None

    # -- mode ----------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        return self._mode

    def set_mode(self, mode: Mode | str) -> Mode:
        """Switch mode (ConfigError for an unknown one); returns the previous mode."""
        new = parse_mode(mode)
        old, self._mode = self._mode, new
        if new is not old:
            for listener in tuple(self._listeners):
                listener(old, new)
        return old

    def on_mode_change(self, listener: ModeListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- the chain -----------------------------------------------------------------------

    def denial(
        self, tool: str, execution: ToolExecution, traits: ToolTraits | None = None
    ) -> PermissionDecision | None:
        """The decision if a deny rule forbids the call, else None (only the first link)."""
        hit = self.rules.first_hit(RuleKind.DENY, tool, execution)
        if hit is None:
            return None
        reason = _rule_reason(hit)
        return PermissionDecision(
            tool=tool,
            mode=self._mode,
            verdict=Verdict.DENY,
            link=Link.DENY_RULES,
            reason=reason,
            rule=hit.entry,
            trail=(Step(Link.DENY_RULES, Verdict.DENY, reason),),
            approval_rule=execution.approval_rule,
        )

    def decide(
        self,
        tool: str,
        execution: ToolExecution,
        traits: ToolTraits | None = None,
        *,
        deny_checked: bool = False,
        explain: bool = False,
        mode: Mode | None = None,
    ) -> PermissionDecision:
        """Run the chain for one resolved call. Pure apart from a few `stat` calls.

        `deny_checked` says the deny rules were just checked for this very call (by
        `denial`, with the rules unchanged since), so the first link need not match again.
        What each passing link said is only written down with `explain`; otherwise the
        decision works it out again when someone asks for its steps.
        """
        call = _Call(
            tool, execution, traits or _PLAIN, self._mode if mode is None else mode, deny_checked
        )
        steps: list[Step] = []
        for link, check, passing in self._chain:
            answer = check(call)
            if answer is None:
                if explain:
                    steps.append(Step(link, None, functools.partial(passing, call)))
                continue
            verdict, reason, hit = answer
            trail: tuple[Step, ...] | Callable[[], tuple[Step, ...]]
            if explain:
                steps.append(Step(link, verdict, reason))
                trail = tuple(steps)
            else:
                trail = functools.partial(self._steps, tool, execution, call.traits, call.mode)
            return PermissionDecision(
                tool=tool,
                mode=call.mode,
                verdict=verdict,
                link=link,
                reason=reason,
                rule=hit.entry if hit else None,
                trail=trail,
                approval_rule=execution.approval_rule,
            )
        raise AssertionError("the fallback link always answers")  # pragma: no cover

    def _steps(
        self, tool: str, execution: ToolExecution, traits: ToolTraits, mode: Mode
    ) -> tuple[Step, ...]:
        return self.decide(tool, execution, traits, explain=True, mode=mode).steps

    # -- the links: each answers (verdict, reason, rule hit) or passes (None) -------------
    #
    # Each link also has a `_pass_*` text saying why it passed, written only on demand.

    @functools.cached_property
    def _chain(self) -> tuple[tuple[Link, _Check, _Passing], ...]:
        return (
            (Link.DENY_RULES, self._deny_rules, self._pass_deny_rules),
            (Link.AUTO_MODE, self._auto_mode, self._pass_mode),
            (Link.SESSION_APPROVALS, self._session_approvals, self._pass_session),
            (Link.ASK_RULES, self._ask_rules, self._pass_ask_rules),
            (Link.ALLOW_RULES, self._allow_rules, self._pass_allow_rules),
            (Link.PROTECTED_PATHS, self._protected_paths, self._pass_protected_paths),
            (Link.YOLO_MODE, self._yolo_mode, self._pass_mode),
            (Link.READ_ONLY, self._read_only, self._pass_read_only),
            (Link.GIT_WRITE, self._git_write, self._pass_git_write),
            (Link.FALLBACK, self._fallback, self._pass_mode),
        )

    def _rule_link(self, kind: RuleKind, verdict: Verdict, call: _Call) -> _Answer | None:
        hit = self.rules.first_hit(kind, call.tool, call.execution)
        return (verdict, _rule_reason(hit), hit) if hit is not None else None

    def _deny_rules(self, call: _Call) -> _Answer | None:
        return None if call.deny_checked else self._rule_link(RuleKind.DENY, Verdict.DENY, call)

    def _pass_deny_rules(self, call: _Call) -> str:
        return _none_of(self.rules.of_kind(RuleKind.DENY), "deny rule")

    def _auto_mode(self, call: _Call) -> _Answer | None:
        if call.mode is not Mode.AUTO:
            return None
        return Verdict.APPROVE, "auto mode approves every call no deny rule forbids", None

    @staticmethod
    def _pass_mode(call: _Call) -> str:
        return f"the mode is {call.mode}"

    def _session_approvals(self, call: _Call) -> _Answer | None:
        hit = self.session.first_hit(call.tool, call.execution) or joint_allow_hit(
            self.session.entries, call.tool, call.execution
        )
        if hit is None:
            return None
        if hit.together:
            approved = ", ".join(f'"{entry.text}"' for entry in hit.entries)
            reason = f"a person approved {approved} for this session; together they cover it"
            return Verdict.APPROVE, reason, hit
        return Verdict.APPROVE, f'a person approved "{hit.entry.text}" for this session', hit

    def _pass_session(self, call: _Call) -> str:
        if not len(self.session):
            return "nothing has been approved for this session"
        return f"none of the {len(self.session)} approvals remembered this session covers it"

    def _ask_rules(self, call: _Call) -> _Answer | None:
        return self._rule_link(RuleKind.ASK, Verdict.ASK, call)

    def _pass_ask_rules(self, call: _Call) -> str:
        return _none_of(self.rules.of_kind(RuleKind.ASK), "ask rule")

    def _allow_rules(self, call: _Call) -> _Answer | None:
        answer = self._rule_link(RuleKind.ALLOW, Verdict.APPROVE, call)
        if answer is not None or call.execution.matches_rules is None:
            return answer
        # Parts of a compound command may each be allowed by a different rule, or by a
        # session approval (the ask rules above had their say already).
        entries = [*self.rules.of_kind(RuleKind.ALLOW), *self.session.entries]
        hit = joint_allow_hit(entries, call.tool, call.execution)
        return (Verdict.APPROVE, _rule_reason(hit), hit) if hit is not None else None

    def _pass_allow_rules(self, call: _Call) -> str:
        return _none_of(self.rules.of_kind(RuleKind.ALLOW), "allow rule", fully=True)

    def _protected_paths(self, call: _Call) -> _Answer | None:
        files = call.files
        if not files:
            return None
        protected = _protected_reason(files, self.git_tree())
        return (Verdict.ASK, protected, None) if protected is not None else None

    @staticmethod
    def _pass_protected_paths(call: _Call) -> str:
        return _paths_clean(call.files)

    def _yolo_mode(self, call: _Call) -> _Answer | None:
        if call.mode is not Mode.YOLO:
            return None
        return (
            Verdict.APPROVE,
            "yolo mode approves every call not denied, asked for by a rule, or touching a "
            "secret or .git path",
            None,
        )

    def _read_only(self, call: _Call) -> _Answer | None:
        if not call.traits.read_only or self._outside(call.execution) is not None:
            return None
        return (
            Verdict.APPROVE,
            f"{call.tool} is read-only and touches nothing outside the workspace",
            None,
        )

    def _pass_read_only(self, call: _Call) -> str:
        if not call.traits.read_only:
            return f"{call.tool} is not a read-only tool"
        return str(self._outside(call.execution))

    def _git_write(self, call: _Call) -> _Answer | None:
        if call.tool not in GIT_WRITE_TOOLS or self._git_write_problem(call) is not None:
            return None
        return (
            Verdict.APPROVE,
            f"{call.tool} writes only inside the workspace, a git work tree (git can undo it)",
            None,
        )

    def _pass_git_write(self, call: _Call) -> str:
        return str(self._git_write_problem(call))

    def _fallback(self, call: _Call) -> _Answer:
        inside = self._outside(call.execution) if call.traits.read_only else None
        return Verdict.ASK, _fallback_reason(call.tool, call.traits, inside), None

    # -- helpers -------------------------------------------------------------------------

    def git_tree(self) -> GitTree | None:
        """The workspace's git work tree, looked up again only when its `.git` marker
        appears or disappears (one `lstat` per call instead of a walk up the tree)."""
        cached = self._git
        if cached is not None:
            tree, marker = cached
            if os.path.lexists(marker) == (tree is not None):
                return tree
        tree = find_git_tree(self.workspace.root)
        self._git = (tree, (tree.top if tree else self.workspace.root) / ".git")
        return tree

    def _outside(self, execution: ToolExecution) -> str | None:
        """Why the call is not known to stay inside the workspace, or None if it is."""
        accesses = execution.accesses
        if accesses is None or accesses.is_exclusive:
            return "it does not declare what it touches, so it may touch anything"
        for access in accesses.files:
            if not self.workspace.contains(access.path):
                return f"it touches {access.path}, outside the workspace"
        return None

    def _git_write_problem(self, call: _Call) -> str | None:
        tool, execution = call.tool, call.execution
        if tool not in GIT_WRITE_TOOLS:
            return f"only {' and '.join(sorted(GIT_WRITE_TOOLS))} are approved this way"
        accesses = execution.accesses
        if accesses is None or accesses.is_exclusive:
            return f"this {tool} call does not declare what it writes"
        written = accesses.written_paths
        if not written:
            return f"this {tool} call declares no write"
        tree = self.git_tree()
        if tree is None:
            return f"the workspace {self.workspace.root} is not inside a git work tree"
        for path in written:
            if not self.workspace.contains(path):
                return f"it writes {path}, outside the workspace"
            try:
                real = real_path(Path(os.path.abspath(path)))
            except OSError:
                return f"{path} cannot be resolved"
            if not is_within(real, tree.top):
                return f"it writes {path}, outside the git work tree {tree.top}"
        return None


def _rule_reason(hit: RuleHit) -> str:
    if hit.together:
        rules = "; ".join(entry.describe() for entry in hit.entries)
        return f"each part of it matches one of these, which together cover it: {rules}"
    partial = (
        " (some parts of the call match it, which is enough for a rule that restricts)"
        if hit.match is RuleMatch.PARTIAL
        else ""
    )
    note = f"; {hit.note}" if hit.note else ""
    return f"it matches the {hit.entry.describe()}{partial}{note}"


def _none_of(entries: Sequence[object], what: str, *, fully: bool = False) -> str:
    how = " fully" if fully else ""
    if not entries:
        return f"no {what}s are set"
    if len(entries) == 1:
        return f"the one {what} does not cover it{how}"
    return f"none of the {len(entries)} {what}s covers it{how}"


def _paths_clean(items: tuple[FileAccess, ...]) -> str:
    if not items:
        return "it declares no file paths"
    if len(items) == 1:
        return f"{items[0].path} is neither a secret nor a .git path"
    return f"none of its {len(items)} paths is a secret or a .git path"


def _protected_reason(files: tuple[FileAccess, ...], tree: GitTree | None) -> str | None:
    for access in files:
        reason = sensitive_reason(access.path) or private_key_reason(access.path)
        if reason is not None:
            return f"it touches {access.path}, which is {reason}"
        if has_git_component(access.path):
            return f"it touches {access.path}, inside a .git directory"
        if tree is not None:
            try:
                real = real_path(Path(os.path.abspath(access.path)))
            except OSError:
                continue
            for control in tree.control_dirs:
                if is_within(real, control):
                    return f"it touches {access.path}, inside git's control directory {control}"
    return None


def _fallback_reason(tool: str, traits: ToolTraits, inside_problem: str | None) -> str:
    if traits.read_only and inside_problem:
        return f"{tool} only reads, but {inside_problem}; nothing approves that on its own"
    return (
        f"no rule or mode approves {tool} on its own: it is not read-only, and it is not a "
        "Write/Edit inside a git work tree"
    )
