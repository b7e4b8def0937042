"""The permission engine: one chain of links decides approve / ask / deny for a call.

The chain, first answer wins:

 1. deny rules            a deny rule covers the call (fully or partly)    -> deny
 2. auto mode             mode is auto                                     -> approve
 3. session approvals     a "yes, for this session" covers it fully        -> approve
 4. ask rules             an ask rule covers it (fully or partly)          -> ask
 5. allow rules           an allow rule covers it fully                    -> approve
 6. secret or .git paths  it touches a secret file or git's control files  -> ask
 7. yolo mode             mode is yolo                                     -> approve
 8. read-only inside      a read-only tool touching only the workspace     -> approve
 9. git work tree write   Write/Edit inside the workspace, a git work tree -> approve
10. fallback                                                               -> ask

Nothing can override a deny: it is the first link. The engine only decides; the permission
gate (execution layer) acts on the decision and asks a person through an `Approver`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from deftly.contract.accesses import FileAccess
from deftly.contract.tool import RuleMatch, ToolExecution, ToolTraits
from deftly.policy.paths import Workspace, real_path
from deftly.policy.permissions.decision import Link, PermissionDecision, Step, Verdict
from deftly.policy.permissions.git import GitTree, find_git_tree, has_git_component, is_within
from deftly.policy.permissions.modes import Mode, parse_mode
from deftly.policy.permissions.rulebook import RuleBook, RuleHit, RuleKind, SessionApprovals
from deftly.policy.sensitive import private_key_reason, sensitive_reason

GIT_WRITE_TOOLS = frozenset({"Write", "Edit"})

ModeListener = Callable[[Mode, Mode], None]


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
            steps=(Step(Link.DENY_RULES, Verdict.DENY, reason),),
            approval_rule=execution.approval_rule,
        )

    def decide(
        self,
        tool: str,
        execution: ToolExecution,
        traits: ToolTraits | None = None,
        *,
        deny_checked: bool = False,
    ) -> PermissionDecision:
        """Run the chain for one resolved call. Pure apart from a few `stat` calls.

        `deny_checked` says the deny rules were just checked for this very call (by
        `denial`, with the rules unchanged since), so the first link need not match again.
        """
        traits = traits or ToolTraits()
        mode = self._mode
        steps: list[Step] = []

        def decided(
            link: Link, verdict: Verdict, reason: str, hit: RuleHit | None = None
        ) -> PermissionDecision:
            steps.append(Step(link, verdict, reason))
            return PermissionDecision(
                tool=tool,
                mode=mode,
                verdict=verdict,
                link=link,
                reason=reason,
                rule=hit.entry if hit else None,
                steps=tuple(steps),
                approval_rule=execution.approval_rule,
            )

        def passed(link: Link, detail: str) -> None:
            steps.append(Step(link, None, detail))

        # 1. deny rules
        hit = None if deny_checked else self.rules.first_hit(RuleKind.DENY, tool, execution)
        if hit is not None:
            return decided(Link.DENY_RULES, Verdict.DENY, _rule_reason(hit), hit)
        passed(Link.DENY_RULES, _none_of(self.rules.of_kind(RuleKind.DENY), "deny rule"))

        # 2. auto mode
        if mode is Mode.AUTO:
            return decided(
                Link.AUTO_MODE,
                Verdict.APPROVE,
                "auto mode approves every call no deny rule forbids",
            )
        passed(Link.AUTO_MODE, f"the mode is {mode}")

        # 3. session approvals
        hit = self.session.first_hit(tool, execution)
        if hit is not None:
            return decided(
                Link.SESSION_APPROVALS,
                Verdict.APPROVE,
                f'a person approved "{hit.entry.text}" for this session',
                hit,
            )
        passed(
            Link.SESSION_APPROVALS,
            (
                f"none of the {len(self.session)} approvals remembered this session covers it"
                if len(self.session)
                else "nothing has been approved for this session"
            ),
        )

        # 4. ask rules
        hit = self.rules.first_hit(RuleKind.ASK, tool, execution)
        if hit is not None:
            return decided(Link.ASK_RULES, Verdict.ASK, _rule_reason(hit), hit)
        passed(Link.ASK_RULES, _none_of(self.rules.of_kind(RuleKind.ASK), "ask rule"))

        # 5. allow rules
        hit = self.rules.first_hit(RuleKind.ALLOW, tool, execution)
        if hit is not None:
            return decided(Link.ALLOW_RULES, Verdict.APPROVE, _rule_reason(hit), hit)
        passed(
            Link.ALLOW_RULES,
            _none_of(self.rules.of_kind(RuleKind.ALLOW), "allow rule", fully=True),
        )

        # 6. secret files and git's control files
        files = execution.accesses.files if execution.accesses is not None else ()
        tree = self.git_tree() if files or tool in GIT_WRITE_TOOLS else None
        protected = _protected_reason(files, tree)
        if protected is not None:
            return decided(Link.PROTECTED_PATHS, Verdict.ASK, protected)
        passed(Link.PROTECTED_PATHS, _paths_clean(files))

        # 7. yolo mode
        if mode is Mode.YOLO:
            return decided(
                Link.YOLO_MODE,
                Verdict.APPROVE,
                "yolo mode approves every call not denied, asked for by a rule, or touching a "
                "secret or .git path",
            )
        passed(Link.YOLO_MODE, f"the mode is {mode}")

        # 8. read-only tools that stay inside the workspace
        inside_problem = self._outside(execution) if traits.read_only else None
        if traits.read_only and inside_problem is None:
            return decided(
                Link.READ_ONLY,
                Verdict.APPROVE,
                f"{tool} is read-only and touches nothing outside the workspace",
            )
        passed(
            Link.READ_ONLY,
            f"{tool} is not a read-only tool" if not traits.read_only else str(inside_problem),
        )

        # 9. Write/Edit inside a git work tree
        git_problem = self._git_write_problem(tool, execution, tree)
        if git_problem is None:
            return decided(
                Link.GIT_WRITE,
                Verdict.APPROVE,
                f"{tool} writes only inside the workspace, a git work tree (git can undo it)",
            )
        passed(Link.GIT_WRITE, git_problem)

        # 10. fallback
        return decided(Link.FALLBACK, Verdict.ASK, _fallback_reason(tool, traits, inside_problem))

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

    def _git_write_problem(
        self, tool: str, execution: ToolExecution, tree: GitTree | None
    ) -> str | None:
        if tool not in GIT_WRITE_TOOLS:
            return f"only {' and '.join(sorted(GIT_WRITE_TOOLS))} are approved this way"
        accesses = execution.accesses
        if accesses is None or accesses.is_exclusive:
            return f"this {tool} call does not declare what it writes"
        written = accesses.written_paths
        if not written:
            return f"this {tool} call declares no write"
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
