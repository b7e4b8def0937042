"""Is a shell command proven to change nothing? (Plan mode lets only those run unasked.)

A proof, not a guess: every simple command (command substitutions included) must be a
program on a small list of read-only ones, without the options that make it write or run
other programs (`sed -i`, `find -delete`, `rg --pre`, `sort -o`, `git branch -D`), and
nothing may be redirected to a file. Anything the parser cannot know for certain (an
expansion as the command word, a shell reading a script, code given to an interpreter, a
part that did not parse) is not read-only. False negatives only cost a question.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from typing import TypeAlias

from deftly.features.shell.rules import CommandSplit, Segment

Check: TypeAlias = Callable[[Sequence[str]], str | None]
"""Looks at a command's arguments (after its name): why it may write, or None."""

_REDIRECT = re.compile(r"^[0-9]*(?:&>>?|<<<|<<-?|<>|>&|<&|>>?\|?|<)")


def _always(args: Sequence[str]) -> str | None:
    return None


def _refusing(*options: str) -> Check:
    """Read-only unless one of `options` is given (`-o`, or `-o=x`, `-ofile`, `--opt=x`)."""

    def check(args: Sequence[str]) -> str | None:
        for arg in args:
            if arg == "--":
                return None
            for option in options:
                if (
                    arg == option
                    or arg.startswith(option + "=")
                    or (len(option) == 2 and option[0] == "-" and _short_group(arg, option[1]))
                ):
                    return f"{option} makes it write or run a program"
        return None

    return check


def _short_group(arg: str, letter: str) -> bool:
    """Does `-xyz` (a group of short options) hold `letter`?"""
    return len(arg) > 1 and arg[0] == "-" and arg[1] != "-" and letter in arg[1:]


def _no_operands(limit: int) -> Check:
    def check(args: Sequence[str]) -> str | None:
        operands = [arg for arg in args if not arg.startswith("-")]
        return (
            f"{len(operands)} operands may name a file it writes" if len(operands) > limit else None
        )

    return check


def _find(args: Sequence[str]) -> str | None:
    writers = {
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
    }
    for arg in args:
        if arg in writers:
            return f"find {arg} runs a program or changes files"
    return None


def _sed(args: Sequence[str]) -> str | None:
    for arg in args:
        if arg in ("-i", "--in-place") or arg.startswith("--in-place") or _short_group(arg, "i"):
            return "sed -i edits files in place"
    scripts = [arg for arg in args if not arg.startswith("-")][:1]
    scripts += [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("-e", "--expression")]
    if any(ch in script for script in scripts for ch in "wWe"):
        return "the sed script may write a file (w) or run a command (e)"
    if any(arg in ("-f", "--file") or arg.startswith("--file=") for arg in args):
        return "a sed script from a file cannot be checked"
    return None


def _date(args: Sequence[str]) -> str | None:
    for arg in args:
        if arg in ("-s", "--set") or arg.startswith("--set=") or _short_group(arg, "s"):
            return "date -s sets the clock"
        if not arg.startswith(("-", "+")):
            return "date with an operand sets the clock"
    return None


_GIT_LISTING = {
    "branch": frozenset(
        {
            "-a",
            "-r",
            "-v",
            "-vv",
            "-l",
            "--list",
            "--all",
            "--remotes",
            "--verbose",
            "--show-current",
            "--merged",
            "--no-merged",
            "--contains",
            "--no-contains",
            "--color",
            "--no-color",
            "--sort",
            "--format",
            "--column",
            "--no-column",
        }
    ),
    "tag": frozenset(
        {
            "-l",
            "--list",
            "-n",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--sort",
            "--format",
            "--points-at",
            "--column",
        }
    ),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
    "reflog": frozenset({"show"}),
}
_GIT_READERS = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "blame",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "describe",
        "shortlog",
        "grep",
        "show-ref",
        "count-objects",
        "for-each-ref",
        "name-rev",
        "merge-base",
        "rev-list",
        "whatchanged",
        "version",
        "diff-tree",
        "diff-files",
        "diff-index",
        "check-ignore",
        "var",
    }
)


def _git(args: Sequence[str]) -> str | None:
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "--no-pager":
            continue
        if option == "-C" and rest:
            rest.pop(0)
            continue
        return f"git {option} may change what git runs"
    if not rest:
        return None
    sub, sub_args = rest[0], rest[1:]
    if sub in _GIT_READERS:
        if any(arg.startswith("--output") or arg in ("--ext-diff",) for arg in sub_args):
            return f"git {sub} --output writes a file"
        return None
    if sub == "config":
        readers = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin"}
        return None if readers & set(sub_args) else "git config may set a value"
    allowed = _GIT_LISTING.get(sub)
    if allowed is None:
        return f"git {sub} is not known to be read-only"
    if not sub_args:
        return None
    first = sub_args[0]
    if sub in ("branch", "tag") and first in ("-l", "--list"):
        return None  # listing, with patterns
    for arg in sub_args:
        if arg.split("=", 1)[0] not in allowed and not (sub == "remote" and arg != first):
            return f"git {sub} {arg} may change the repository"
    return None


READ_ONLY_PROGRAMS: dict[str, Check] = {
    **{
        name: _always
        for name in (
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "pwd",
            "echo",
            "printf",
            "grep",
            "egrep",
            "fgrep",
            "stat",
            "du",
            "df",
            "diff",
            "cmp",
            "comm",
            "cut",
            "tr",
            "nl",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "which",
            "type",
            "whoami",
            "id",
            "uname",
            "true",
            "false",
            "test",
            "[",
            "cd",
            "jq",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "seq",
            "printenv",
            "ps",
            "column",
            "od",
            "hexdump",
            "file",
            "rev",
            "fold",
            "expand",
            "sleep",
        )
    },
    "rg": _refusing("--pre"),
    "find": _find,
    "sed": _sed,
    "sort": _refusing("-o", "--output"),
    "uniq": _no_operands(1),
    "tree": _refusing("-o"),
    "xxd": _refusing("-r", "--revert"),
    "date": _date,
    "hostname": _no_operands(0),
    "env": _no_operands(0),
    "git": _git,
}
"""The programs that only read, and what makes each write (or run another program)."""


def not_read_only(split: CommandSplit) -> str | None:
    """Why the command is not proven read-only, or None when it is."""
    if split.opaque:
        return split.opaque[0]
    if not split.parsed or not split.segments:
        return "the command could not be parsed for certain"
    for segment in split.segments:
        reason = _segment_problem(segment)
        if reason is not None:
            return reason
    return None


def _segment_problem(segment: Segment) -> str | None:
    if segment.redirects:
        return f"it writes {segment.redirects[0]} (a redirection)"
    words = _words(segment.strict[-1] if segment.strict else segment.text)
    if words is None:
        return f"`{segment.text}` could not be split into words"
    if not words:
        return None  # only assignments or redirections of input
    name = words[0]
    if "=" in name:
        return f"`{segment.text}` sets {name.split('=', 1)[0]} for what it runs"
    check = READ_ONLY_PROGRAMS.get(name)
    if check is None:
        return f"{name} is not a program known to only read"
    problem = check(words[1:])
    return f"{name}: {problem}" if problem else None


def _words(spelling: str) -> list[str] | None:
    """The words of one simple command, input redirections left out."""
    try:
        raw = shlex.split(spelling, comments=False, posix=True)
    except ValueError:
        return None
    words: list[str] = []
    skip = False
    for word in raw:
        if skip:
            skip = False
            continue
        match = _REDIRECT.match(word)
        if match:
            skip = match.end() == len(word)  # a bare operator: its target follows
            continue
        words.append(word)
    return words
