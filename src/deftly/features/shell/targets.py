"""The files a shell command writes that can be known from its text, for the engine.

Redirection targets (`> out.txt`, `>> log`, `tee f`) are file writes: each is resolved
against the working directory (`~` expanded) and declared, so the permission engine treats
it like a Write (outside the workspace, a secret, `.git`, a control file, a file git cannot
restore). A target that cannot be known before the command runs (`> $F`, a glob, a
relative path after a `cd`) makes the command unverifiable instead. deftly's control files
the command names are found as well; reading them is fine, anything else asks.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from deftly.contract.records import frozen
from deftly.features.shell.mentions import candidate_words, expand_word, glob_example
from deftly.features.shell.rules import CommandSplit
from deftly.policy.control import CONTROL_NAME_EXAMPLES, ControlFiles

_DYNAMIC = frozenset("$`*?[{")
_GLOBS = frozenset("*?[")
_QUOTES = frozenset("'\"`")
_LITERAL = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"")
_LITERAL_SPLIT = re.compile(r"[\s<>|&;,()]+")
_MOVES = frozenset({"cd", "pushd", "popd"})
_CONTROL_MARKERS = ("deftly", "agents", "claude")
"""A command holding none of these (in any case) cannot name a control file."""


def may_redirect(command: str) -> bool:
    """A cheap pre-check: no `>` and no `tee`, no output file."""
    return ">" in command or "tee" in command


def may_name_control_files(command: str) -> bool:
    """A cheap pre-check: a marker name, or a glob that might stand for one."""
    lowered = command.lower()
    return any(marker in lowered for marker in _CONTROL_MARKERS) or not _GLOBS.isdisjoint(command)


@frozen
class Targets:
    """The files a command writes through redirections, and those that cannot be known."""

    paths: tuple[str, ...]
    """Absolute paths of the files written through redirections."""
    unknown: tuple[str, ...]
    """Why some target cannot be known before the command runs."""


def redirect_targets(split: CommandSplit, cwd: Path, home: Path) -> Targets:
    """The files `split` writes through redirections, resolved from `cwd` and `home`."""
    paths: dict[str, None] = {}
    unknown: list[str] = []
    moved = False
    for segment in split.segments:
        if segment.words and os.path.basename(segment.words[0]) in _MOVES:
            moved = True
        for target in segment.redirects:
            if not target or not _DYNAMIC.isdisjoint(target):
                unknown.append(f"the output file {target!r} is only known when it runs")
                continue
            path = _absolute(target, cwd, home)
            if moved and not (target.startswith("/") or target.startswith("~")):
                unknown.append(
                    f"the output file {target!r} is relative to a directory changed by cd"
                )
                continue
            paths.setdefault(path)
    return Targets(tuple(paths), tuple(dict.fromkeys(unknown)))


def named_control_files(
    split: CommandSplit, cwd: Path, home: Path, control: ControlFiles
) -> tuple[str, ...]:
    """Absolute paths of deftly's control files the command's words name: plain words,
    `--opt=value`, string literals in code for an interpreter, `$HOME`/`$PWD`/`~`
    expanded, and globs that could match one (`AGENTS.*`, `.d*`; not `*`)."""
    found: dict[str, None] = {}
    for segment in split.segments:
        for raw in candidate_words(segment.words):
            word = expand_word(raw, cwd, home)
            if not word or "$" in word:
                continue
            path = os.path.normpath(os.path.join(cwd, word))
            if control.reason(path) is not None:
                found.setdefault(path)
                continue
            glob = glob_example(path, CONTROL_NAME_EXAMPLES, ignore_case=True)
            if glob is not None:
                found.setdefault(glob)
    return tuple(found)


def _absolute(word: str, cwd: Path, home: Path) -> str:
    if word == "~" or word.startswith("~/"):
        word = os.fspath(home) + word[1:]
    return os.path.normpath(os.path.join(cwd, word))
