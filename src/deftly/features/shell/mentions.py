"""Secret and `.git` files a shell command names, so the permission engine can ask.

The shell can read anything, so this is defence in depth, not a wall (a sandbox is): a
command that names `.env`, an SSH key, a credentials file or a path through `.git` declares
it, and the engine's "secret or .git paths" link asks before yolo mode (or the fallback)
would let it run unseen. Words are taken as the parser gave them (quotes removed, so
`.en''v`, `".env"` and `\\.env` are `.env`) and expanded as far as can be known without
running anything: `~`, `$HOME` / `${HOME}` are the home directory, `$PWD` / `${PWD}` the
command's working directory; another variable stays as written in a folder and counts as
`*` in a file name (`.env$X` may be `.env`). `--opt=value` looks at the value, and a glob
counts when it could match a secret name and starts with a literal (`.e*`, `id_*`; not
`*`). Code handed to an interpreter (`python3 -c "open('.env')"`, `perl -e`, `node -e`, an
awk script) is a word holding quotes: each quoted string literal in it counts as a word
too, and so does each of its words (`os.system('cat .env')`). `$'...'` strings are decoded
as bash does (`$'\\x2e\\x65nv'`). Nothing is read from disk: resolving a call does no I/O.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import re
from collections.abc import Iterable
from pathlib import Path

from deftly.features.shell.rules import CommandSplit
from deftly.policy.permissions.git import has_git_component
from deftly.policy.sensitive import SECRET_NAME_EXAMPLES, sensitive_reason

_MARKERS = ("env", "id_", "credential", "netrc", "pgpass", ".git")
"""A command holding none of these (in any case) cannot name a secret or a .git path."""


_GLOB_CHARS = frozenset("*?[")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_LITERAL = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|`([^`\n]+)`")
_LITERAL_SPLIT = re.compile(r"[\s<>|&;]+")
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
_STRAY_DOLLAR = re.compile(r"\$(?![A-Za-z_{])")
_QUOTES = frozenset("'\"`\\")


def may_name_secrets(command: str) -> bool:
    """A cheap pre-check, so most commands are never parsed for this. Quotes and
    backslashes are taken out first: `.en''v` and `\\.e\\nv` still say `env`."""
    lowered = command.lower()
    if "'" in lowered or '"' in lowered or "\\" in lowered:
        if "$'" in lowered:
            return True  # $'\x2e\x65nv': only decoding tells
        lowered = lowered.replace("'", "").replace('"', "").replace("\\", "")
    return any(marker in lowered for marker in _MARKERS) or not _GLOB_CHARS.isdisjoint(command)


def named_secrets(split: CommandSplit, cwd: Path, home: Path) -> tuple[str, ...]:
    """Absolute paths of the secret or `.git` files the command's words name."""
    found: dict[str, None] = {}
    for segment in split.segments:
        for word in (*candidate_words(segment.words), *_ansi_c_strings(segment.text)):
            path = _absolute(word, cwd, home)
            if path is not None:
                found.setdefault(path)
    return tuple(found)


def _ansi_c_strings(text: str) -> list[str]:
    """The `$'...'` strings of a command as bash decodes them (the parser keeps them
    raw): `cat $'\\x2eenv'` reads `.env`."""
    if "$'" not in text:
        return []
    decoded: list[str] = []
    for match in _ANSI_C.finditer(text):
        try:
            decoded.append(codecs.decode(match.group(1), "unicode_escape"))
        except (UnicodeDecodeError, ValueError):
            continue
    return decoded


def candidate_words(words: Iterable[str]) -> Iterable[str]:
    """What a command's words may name as files: each word, an option's `=value`, the
    string literals of interpreter code and their words."""
    for word in words:
        if not _QUOTES.isdisjoint(word):  # code for an interpreter: its string literals
            for match in _LITERAL.finditer(word):
                literal = match.group(match.lastindex or 0)
                yield literal
                if _LITERAL_SPLIT.search(literal):  # os.system('cat .env'), open(F, "<.env")
                    yield from (part for part in _LITERAL_SPLIT.split(literal) if part)
            yield _dequoted(word)  # or quotes the parser left in (`"$PWD"/.env''`)
        if word.startswith("-"):
            _, eq, value = word.partition("=")
            if eq:
                yield value
            continue
        yield word
        if "=" in word:  # NAME=value, or a value spelled like one
            yield word.split("=", 1)[1]


def _dequoted(word: str) -> str:
    return word.replace("'", "").replace('"', "").replace("`", "").replace("\\", "")


def expand_word(word: str, cwd: Path, home: Path) -> str | None:
    """`word` with what is known statically filled in (`~`, `$HOME`, `$PWD`), other
    variables kept as written; None for a command substitution (parsed on its own)."""
    if not word or "\0" in word or "$(" in word or "`" in word:
        return None
    if word == "~" or word.startswith("~/"):
        word = os.fspath(home) + word[1:]
    if "$" not in word:
        return word
    known = {"HOME": os.fspath(home), "PWD": os.fspath(cwd)}
    word = _VARIABLE.sub(lambda m: known.get(m.group(1) or m.group(2), m.group(0)), word)
    return _STRAY_DOLLAR.sub("", word)  # what the parser leaves of $".env" is `$.env`


def _absolute(raw: str, cwd: Path, home: Path) -> str | None:
    word = expand_word(raw, cwd, home)
    if word is None:
        return None
    path = os.path.normpath(os.path.join(cwd, word))
    if has_git_component(path) or sensitive_reason(path) is not None:
        return path
    name = os.path.basename(path)
    if "$" in name:  # an unknown variable may hold any text: a glob for the name
        name = _VARIABLE.sub("*", name)
    return glob_example(os.path.join(os.path.dirname(path), name), SECRET_NAME_EXAMPLES)


def glob_example(path: str, examples: Iterable[str], *, ignore_case: bool = False) -> str | None:
    """For a path whose name is a glob starting with a literal (`.e*`, `AGENTS.*`; not `*`
    or `*.py`), the path of the first example name it could match, as bash would (a
    leading `.` must be written)."""
    name = os.path.basename(path)
    if not name or _GLOB_CHARS.isdisjoint(name) or name[0] in _GLOB_CHARS:
        return None
    pattern = name.lower() if ignore_case else name
    for example in examples:
        hidden = example.startswith(".") and not name.startswith(".")
        subject = example.lower() if ignore_case else example
        if not hidden and fnmatch.fnmatchcase(subject, pattern):
            return os.path.join(os.path.dirname(path), example)
    return None
