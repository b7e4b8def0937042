"""Commands manual mode runs unasked, and the broader rule a person may remember.

Harmless: every part of the command is on the configured list (`[permissions]
harmless_commands`: `ls`, `git status`, `cat`...), is proven read-only (the plan-mode
proof in `readonly`), has nothing redirected and nothing expanded (`$`, backticks, globs,
`~`, braces), and every word that could name a file names one inside the workspace that
is neither a secret, a `.git` path nor a control file. Anything else is asked about as
before; a false "not harmless" only costs a question.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from deftly.contract.tool import RuleMatch
from deftly.features.shell.readonly import not_read_only
from deftly.features.shell.rules import CommandMatcher, Segment
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from deftly.policy.permissions.git import has_git_component
from deftly.policy.rules import escape_subject
from deftly.policy.sensitive import private_key_reason, sensitive_reason

_EXPANDING = re.compile(r"[$`*?\[\]{}~<>()!\\]")
"""Characters after which the shell may read, expand or redirect something."""
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_-]*")
_INDIRECT = ("--files0-from",)
"""Options that read the names of more files from a file (which are then not checked)."""


def harmless_problem(
    matcher: CommandMatcher,
    allowed: Sequence[str],
    workspace: Workspace,
    cwd: Path,
    control: ControlFiles,
) -> str | None:
    """Why the command is not harmless, or None when it is."""
    if not allowed:
        return "no harmless commands are configured"
    found = _EXPANDING.search(matcher.command)
    if found is not None:
        return f"it holds {found.group(0)!r}, so the shell may expand or redirect something"
    split = matcher.split
    proof = not_read_only(split)
    if proof is not None:
        return proof
    listed = [entry.split() for entry in allowed if entry.split()]
    for segment in split.segments:
        problem = _segment_problem(segment, listed, workspace, cwd, control)
        if problem is not None:
            return problem
    return None


def _segment_problem(
    segment: Segment,
    listed: list[list[str]],
    workspace: Workspace,
    cwd: Path,
    control: ControlFiles,
) -> str | None:
    words = _words(segment)
    if not words:
        return f"`{segment.text}` could not be read for certain"
    entry = next((e for e in listed if words[: len(e)] == e), None)
    if entry is None:
        return f"`{segment.text}` is not on the list of harmless commands"
    for word in words[len(entry) :]:
        if word.startswith(_INDIRECT):
            return f"{word} reads the names of more files from a file"
        if ":" in word:  # `git show HEAD:.env` names a file inside a revision
            return f"{word} may name a file in another form (a revision's path, a URL)"
        subject = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if subject.startswith("-") or not subject:
            continue
        problem = _path_problem(subject, workspace, cwd, control)
        if problem is not None:
            return problem
    return None


def _path_problem(word: str, workspace: Workspace, cwd: Path, control: ControlFiles) -> str | None:
    path = os.path.normpath(os.path.join(cwd, word))
    if not workspace.contains(path):
        return f"{word} may name {path}, outside the workspace"
    reason = sensitive_reason(path) or private_key_reason(path, workspace.probe)
    if reason is not None:
        return f"{word} is {reason}"
    if has_git_component(path):
        return f"{word} is a path through .git"
    why = control.reason(path)
    if why is not None:
        return f"{word} is {why}"
    return None


def _words(segment: Segment) -> list[str] | None:
    spelling = segment.strict[-1] if segment.strict else segment.text
    try:
        return shlex.split(spelling, comments=False, posix=True)
    except ValueError:
        return None


def prefix_rules(tool: str, matcher: CommandMatcher) -> list[str]:
    """A broader rule for "yes, for this session": the command word and its subcommand,
    when it has one (`Bash(git commit *)` for `git commit -m "x"`; `Bash(ls *)` for
    `ls -la src`). Offered only for one simple command the parser read for certain, and
    only when the rule really covers this call."""
    split = matcher.split
    if not split.parsed or split.opaque or len(split.segments) != 1:
        return []
    words = _words(split.segments[0])
    if not words:
        return []
    head = words[:2] if len(words) > 1 and _SUBCOMMAND.fullmatch(words[1]) else words[:1]
    if len(head) == len(words):
        return []  # nothing after it: the exact rule is the prefix rule
    rule = f"{tool}({' '.join(escape_subject(w) for w in head)} *)"
    pattern = rule[len(tool) + 1 : -1]
    return [rule] if matcher.one(pattern) is RuleMatch.FULL else []
