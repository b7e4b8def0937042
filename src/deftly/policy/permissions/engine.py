"""The permission engine: one chain of links decides approve / ask / deny for a call.

The chain, first answer wins:

 1. deny rules            a deny rule covers the call (fully or partly),   -> deny
                          or a Write deny rule a file a shell command
                          writes through a redirection
 2. unverifiable command  what it runs cannot be known statically (`$X f`, -> ask
                          `bash s.sh`, `python -c`, `> $F`) and a deny or
                          ask rule exists for the tool (or for Write, when
                          it may touch anything): no rule can be checked
 3. auto mode             mode is auto                                     -> approve
 4. session approvals     a "yes, for this session" covers it fully (or    -> approve
                          several cover its parts together)
 5. ask rules             an ask rule covers it (fully or partly), or a    -> ask
                          Write ask rule a file a shell command writes
 6. allow rules           an allow rule covers it fully, or allow rules    -> approve
                          and session approvals cover its parts together;
                          for a call that may do more than it declares (a
                          shell command), only if each file it declares
                          writing (a redirection) would be approved on its
                          own, or an allow rule for Write covers it
 7. protected paths       it touches a secret file or git's control files, -> ask
                          or writes one of deftly's control files
                          (`.deftly/**`, the user config dir, AGENTS.md...)
 8. yolo mode             mode is yolo                                     -> approve
 9. read-only inside      a read-only tool touching only the workspace, or -> approve
                          a harmless command: one of `harmless_commands`
                          (`ls`, `git status`, `cat`...), proven read-only,
                          nothing redirected or expanded, naming only
                          workspace files that are not secret or control
10. restorable write      it only writes files it names exactly, each      -> approve
                          inside the workspace, and each new, or tracked
                          and clean in git, or read/written by this session
                          and unchanged since; an in-place write to a file
                          with other hard links never is
11. fallback                                                               -> ask

Nothing can override a deny: it is the first link. The engine only decides; the permission
gate (execution layer) acts on the decision and asks a person through an `Approver`.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeAlias

from deftly.contract.accesses import FileAccess, WriteHow
from deftly.contract.fs import FileStat
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.tool import RuleMatch, ToolExecution, ToolTraits
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from deftly.policy.permissions.decision import Link, PermissionDecision, Step, Verdict
from deftly.policy.permissions.git import (
    FileState,
    GitTree,
    file_state,
    find_git_tree,
    has_git_component,
    is_within,
)
from deftly.policy.permissions.modes import Mode, parse_mode
from deftly.policy.permissions.rulebook import (
    RuleBook,
    RuleEntry,
    RuleHit,
    RuleKind,
    SessionApprovals,
    joint_allow_hit,
)
from deftly.policy.rules import path_rule_matcher
from deftly.policy.sensitive import private_key_reason, sensitive_reason

FILE_WRITE_RULE = "Write"
"""The word of the rule language for writing a file (`Write(build/**)`): besides the Write
tool's calls, such a rule covers every file a call declares writing when it may do more
than it declares (a shell command's redirection). It is part of the rules a person writes,
not a guard on a tool name: it must keep covering redirections whatever tools are
registered, so it is not derived from tool traits (a deny rule must not lapse when the
Write tool is switched off)."""

ModeListener = Callable[[Mode, Mode], None]
_PLAIN = ToolTraits()


class SeenStamp(Protocol):
    """What the file tools' tracker remembers of a file this session saw, enough to tell whether it
    changed since."""

    def same_stat(self, st: FileStat) -> bool:
        """Whether the file, now stat'ed as `st`, is unchanged since the session saw it."""
        ...


SeenFiles: TypeAlias = Callable[[Path], SeenStamp | None]
"""What this session last saw of a file it read or wrote (the file tools' tracker), or
None: the engine approves changing a file the session saw, unchanged since."""


def _nothing_seen(path: Path) -> SeenStamp | None:
    return None


@frozen
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
        *,
        seen_files: SeenFiles | None = None,
        control: ControlFiles | None = None,
    ) -> None:
        self.workspace = workspace
        self.rules = rules if rules is not None else RuleBook()
        self.session = SessionApprovals()
        self.seen_files: SeenFiles = seen_files or _nothing_seen
        """Set by the runtime once the file tools' tracker exists."""
        self.control = control or ControlFiles()
        """deftly's control files; the runtime adds the user's config directory."""
        self.harmless_commands: tuple[str, ...] = ()
        """The commands manual mode runs unasked when they only read inside the workspace
        (`[permissions] harmless_commands`; set by the runtime)."""
        self._mode = parse_mode(mode)
        self._listeners: list[ModeListener] = []
        self._git: tuple[GitTree | None, Path] | None = None

    # -- mode ----------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        """The permission mode now in force (manual, yolo or auto)."""
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
        """Call `listener(old, new)` on every mode switch; returns the function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- the chain -----------------------------------------------------------------------

    def denial(
        self, tool: str, execution: ToolExecution, traits: ToolTraits | None = None
    ) -> PermissionDecision | None:
        """The decision if a deny rule forbids the call, else None (only the first link)."""
        found = self._deny_hit(tool, execution)
        if found is None:
            return None
        hit, reason = found
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
            (Link.UNVERIFIABLE, self._unverifiable, self._pass_unverifiable),
            (Link.AUTO_MODE, self._auto_mode, self._pass_mode),
            (Link.SESSION_APPROVALS, self._session_approvals, self._pass_session),
            (Link.ASK_RULES, self._ask_rules, self._pass_ask_rules),
            (Link.ALLOW_RULES, self._allow_rules, self._pass_allow_rules),
            (Link.PROTECTED_PATHS, self._protected_paths, self._pass_protected_paths),
            (Link.YOLO_MODE, self._yolo_mode, self._pass_mode),
            (Link.READ_ONLY, self._read_only, self._pass_read_only),
            (Link.RESTORABLE_WRITE, self._restorable, self._pass_restorable),
            (Link.FALLBACK, self._fallback, self._pass_mode),
        )

    def _deny_rules(self, call: _Call) -> _Answer | None:
        if call.deny_checked:
            return None
        found = self._deny_hit(call.tool, call.execution)
        return (Verdict.DENY, found[1], found[0]) if found is not None else None

    def _deny_hit(self, tool: str, execution: ToolExecution) -> tuple[RuleHit, str] | None:
        return self._restricting_hit(RuleKind.DENY, tool, execution)

    def _restricting_hit(
        self, kind: RuleKind, tool: str, execution: ToolExecution
    ) -> tuple[RuleHit, str] | None:
        """A deny (or ask) rule for the call, or for writing a file it declares writing
        when it may do more than it declares (a shell redirection is a Write:
        `Write(**/.env)` covers `echo x > .env`)."""
        hit = self.rules.first_hit(kind, tool, execution)
        if hit is not None:
            return hit, _rule_reason(hit)
        accesses = execution.accesses
        if accesses is None or not accesses.is_exclusive or not self.rules.of_kind(kind):
            return None
        for access in accesses.writes:
            hit = self.rules.first_hit(kind, FILE_WRITE_RULE, self._write_probe(access.path))
            if hit is not None:
                return hit, f"it writes {access.path}, and {_rule_reason(hit)}"
        return None

    def _pass_deny_rules(self, call: _Call) -> str:
        return _none_of(self.rules.of_kind(RuleKind.DENY), "deny rule")

    def _restricting_rules(self, call: _Call) -> list[RuleEntry]:
        """The deny and ask rules that could apply to the call: its tool's, and for a call
        that may touch anything (a shell command) the Write rules too, since it may write
        any file."""
        accesses = call.execution.accesses
        writes_anything = accesses is None or accesses.is_exclusive
        return [
            entry
            for kind in (RuleKind.DENY, RuleKind.ASK)
            for entry in self.rules.of_kind(kind)
            if entry.rule.matches_tool(call.tool)
            or (writes_anything and entry.rule.matches_tool(FILE_WRITE_RULE))
        ]

    def _unverifiable(self, call: _Call) -> _Answer | None:
        why = call.execution.unverifiable
        if why is None:
            return None
        restricting = self._restricting_rules(call)
        if not restricting:
            return None
        opaque = why()
        if not opaque:
            return None
        rule = restricting[0]
        return (
            Verdict.ASK,
            f"what it runs cannot be known before it runs ({opaque}), so the "
            f"{rule.describe()} cannot be checked against it",
            None,
        )

    def _pass_unverifiable(self, call: _Call) -> str:
        why = call.execution.unverifiable
        opaque = why() if why is not None else None
        if not opaque:
            return "what it runs is known before it runs"
        return f"no deny or ask rule exists for {call.tool} ({opaque})"

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
        found = self._restricting_hit(RuleKind.ASK, call.tool, call.execution)
        return (Verdict.ASK, found[1], found[0]) if found is not None else None

    def _pass_ask_rules(self, call: _Call) -> str:
        return _none_of(self.rules.of_kind(RuleKind.ASK), "ask rule")

    def _allow_hit(self, call: _Call) -> RuleHit | None:
        hit = self.rules.first_hit(RuleKind.ALLOW, call.tool, call.execution)
        if hit is not None or call.execution.matches_rules is None:
            return hit
        # Parts of a compound command may each be allowed by a different rule, or by a
        # session approval (the ask rules above had their say already).
        entries = [*self.rules.of_kind(RuleKind.ALLOW), *self.session.entries]
        return joint_allow_hit(entries, call.tool, call.execution)

    def _allow_rules(self, call: _Call) -> _Answer | None:
        hit = self._allow_hit(call)
        if hit is None or self._side_write_problem(call) is not None:
            return None
        return Verdict.APPROVE, _rule_reason(hit), hit

    def _pass_allow_rules(self, call: _Call) -> str:
        hit = self._allow_hit(call)
        if hit is not None:
            return f"{_rule_reason(hit)}, but {self._side_write_problem(call)}"
        return _none_of(self.rules.of_kind(RuleKind.ALLOW), "allow rule", fully=True)

    def _side_write_problem(self, call: _Call) -> str | None:
        """For a call that may do more than it declares (a shell command), a rule covers
        what it runs, not where it writes: each declared write (a redirection target)
        must be approved on its own, or by an allow rule for writing that file."""
        why = call.execution.unverifiable
        opaque = why() if why is not None else None
        if opaque:
            return (
                f"no rule can vouch for it: what it runs cannot be known before it runs ({opaque})"
            )
        accesses = call.execution.accesses
        if accesses is None or not accesses.is_exclusive:
            return None
        for access in accesses.writes:
            if self._write_allowed_by_rule(access.path):
                continue
            problem = self._protected_write(access) or (
                None if call.mode is Mode.YOLO else self._write_problem(access)
            )
            if problem is not None:
                rule = f"{FILE_WRITE_RULE}({access.path})"
                return (
                    f"a rule for the command does not cover where it writes: {problem} "
                    f"(an allow rule {rule} would)"
                )
        return None

    def _write_allowed_by_rule(self, path: str) -> bool:
        probe = self._write_probe(path)
        return self.rules.first_hit(RuleKind.ALLOW, FILE_WRITE_RULE, probe) is not None

    def _write_probe(self, path: str) -> ToolExecution:
        """A Write of `path`, as the rules see it (never run)."""
        return ToolExecution(
            execute=_never,
            approval_rule="",
            matches_rule=path_rule_matcher(path, cwd=self.workspace.cwd, home=self.workspace.home),
        )

    def _protected_paths(self, call: _Call) -> _Answer | None:
        files = call.files
        if not files:
            return None
        protected = _protected_reason(files, self.git_tree(), self.workspace)
        if protected is None:
            for access in files:
                if access.operation.writes:
                    control = self.control.reason(access.path)
                    if control is not None:
                        protected = f"it writes {access.path}, {control}"
                        break
        return (Verdict.ASK, protected, None) if protected is not None else None

    @staticmethod
    def _pass_protected_paths(call: _Call) -> str:
        return _paths_clean(call.files)

    def _protected_write(self, access: FileAccess) -> str | None:
        """Why writing this file asks in every mode but auto, or None."""
        found = _protected_reason((access,), self.git_tree(), self.workspace)
        if found is not None:
            return found
        control = self.control.reason(access.path)
        return f"it writes {access.path}, {control}" if control is not None else None

    def _yolo_mode(self, call: _Call) -> _Answer | None:
        if call.mode is not Mode.YOLO:
            return None
        return (
            Verdict.APPROVE,
            "yolo mode approves every call not denied, asked for by a rule, touching a "
            "secret or .git path, or writing a control file",
            None,
        )

    def _read_only(self, call: _Call) -> _Answer | None:
        if not call.traits.read_only:
            if self._harmless_problem(call) is not None:
                return None
            return (
                Verdict.APPROVE,
                "it is a harmless command ([permissions] harmless_commands) that only reads "
                "inside the workspace",
                None,
            )
        if self._outside(call.execution) is not None:
            return None
        return (
            Verdict.APPROVE,
            f"{call.tool} is read-only and touches nothing outside the workspace",
            None,
        )

    def _harmless_problem(self, call: _Call) -> str | None:
        harmless = call.execution.harmless
        if harmless is None:
            return f"{call.tool} is not a read-only tool"
        problem = harmless(self.harmless_commands)
        return f"it is not a harmless command: {problem}" if problem else None

    def _pass_read_only(self, call: _Call) -> str:
        if not call.traits.read_only:
            return str(self._harmless_problem(call))
        return str(self._outside(call.execution))

    def _restorable(self, call: _Call) -> _Answer | None:
        if self._restorable_problem(call) is not None:
            return None
        return (
            Verdict.APPROVE,
            f"{call.tool} only creates new files or changes files that git or this session "
            "can restore, inside the workspace",
            None,
        )

    def _pass_restorable(self, call: _Call) -> str:
        return str(self._restorable_problem(call))

    def _restorable_problem(self, call: _Call) -> str | None:
        tool, accesses = call.tool, call.execution.accesses
        if accesses is None or accesses.is_exclusive:
            return f"this {tool} call does not declare all it writes"
        writes = accesses.writes
        if not writes:
            return f"this {tool} call declares no write"
        for access in writes:
            if access.how is None:
                return f"{tool} does not say how it writes {access.path}"
            problem = self._write_problem(access)
            if problem is not None:
                return problem
        return None

    def _fallback(self, call: _Call) -> _Answer:
        why = call.execution.unverifiable
        opaque = why() if why is not None else None
        if opaque:
            reason = (
                f"what {call.tool} runs or writes cannot be known before it runs ({opaque}), "
                "so no rule can vouch for it"
            )
            return Verdict.ASK, reason, None
        if call.traits.read_only:
            inside = self._outside(call.execution)
            return Verdict.ASK, _fallback_reason(call.tool, call.traits, inside), None
        if self._allow_hit(call) is not None:
            side = self._side_write_problem(call)
            if side is not None:
                return Verdict.ASK, side, None
        accesses = call.execution.accesses
        if (
            accesses is not None
            and not accesses.is_exclusive
            and accesses.writes
            and all(a.how for a in accesses.writes)
        ):
            problem = self._restorable_problem(call)
            if problem is not None:
                advice = (
                    f"; {call.tool} of a file this session has read (and that has not changed "
                    "since) needs no approval, so Read it first"
                    if "this session" in problem
                    else ""
                )
                return Verdict.ASK, problem + advice, None
        return Verdict.ASK, _fallback_reason(call.tool, call.traits, None), None

    # -- helpers -------------------------------------------------------------------------

    def git_tree(self) -> GitTree | None:
        """The workspace's git work tree, looked up again only when its `.git` marker
        appears or disappears (one `lstat` per call instead of a walk up the tree)."""
        cached = self._git
        if cached is not None:
            tree, marker = cached
            if self.workspace.probe.lexists(os.fspath(marker)) == (tree is not None):
                return tree
        tree = find_git_tree(self.workspace.root, self.workspace.probe)
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

    def _write_problem(self, access: FileAccess) -> str | None:
        """Why manual mode does not approve this write on its own, or None: the file is
        new, or git can restore it (tracked and clean), or this session saw it last."""
        path = access.path
        if not self.workspace.contains(path):
            return f"it writes {path}, outside the workspace"
        shown = self._shown(path)
        try:
            st = self.workspace.probe.stat(path)
        except FileNotFoundError:
            return None  # a new file: nothing is lost
        except OSError as exc:
            return f"{shown} cannot be examined ({exc.strerror or exc})"
        if not stat.S_ISREG(st.st_mode):
            return f"{shown} is not a regular file"
        if access.how is WriteHow.IN_PLACE and st.st_nlink > 1:
            return (
                f"{shown} has {st.st_nlink} hard links: its other names may be anywhere, "
                "outside the workspace too, and this write changes them all"
            )
        real = self.workspace.real_path(os.path.abspath(path))
        seen = self.seen_files(real) or self.seen_files(Path(path))
        if seen is not None and seen.same_stat(st):
            return None
        session = (
            "it changed since this session last read or wrote it"
            if seen is not None
            else "this session has not read it"
        )
        tree = self.git_tree()
        if tree is None or not is_within(real, tree.top):
            return f"{shown} is not in a git work tree and {session}: nothing can restore it"
        state, why = file_state(tree, real, probe=self.workspace.probe)
        if state is FileState.CLEAN:
            return None
        what = {
            FileState.UNTRACKED: "is not tracked by git",
            FileState.IGNORED: "is ignored by git",
            FileState.CHANGED: "has changes not committed to git",
            FileState.UNKNOWN: f"may not be committed ({why})",
        }[state]
        return f"{shown} {what} and {session}: git cannot restore it"

    def _shown(self, path: str) -> str:
        root = os.fspath(self.workspace.root)
        if path.startswith(root + "/"):
            return path[len(root) + 1 :]
        return path


def _never(ctx: object) -> ToolResult:  # pragma: no cover - a probe, never run
    raise AssertionError("a probe execution is never run")


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
        return f"{items[0].path} is neither a secret, a .git path nor a control file written"
    return f"none of its {len(items)} paths is a secret, a .git path or a control file written"


def _protected_reason(
    files: tuple[FileAccess, ...], tree: GitTree | None, workspace: Workspace
) -> str | None:
    for access in files:
        reason = sensitive_reason(access.path) or private_key_reason(access.path, workspace.probe)
        if reason is not None:
            return f"it touches {access.path}, which is {reason}"
        if has_git_component(access.path):
            return f"it touches {access.path}, inside a .git directory"
        if tree is not None:
            try:
                real = workspace.real_path(os.path.abspath(access.path))
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
        f"no rule or mode approves {tool} on its own: it is not read-only, and it does not "
        "only create new files or change files git or this session can restore"
    )
