"""Permission rules for shell commands, matched one simple command at a time.

`git status && rm -rf x` is two commands. A rule `Bash(pattern)` covers the call FULLy
only when it covers every one of them; covering some is PARTIAL (enough for a deny, never
for an allow). Commands are found with a real parser (bashlex), inside `$(...)`,
backticks, process substitutions, expanding here-documents, `bash -c '...'` and `eval`,
and cross-checked by a quote-aware scanner: a substitution the parser did not see, a
construct it cannot parse, or anything left unclosed makes the command "not parsed", and
a command that is not parsed is never approved by a pattern (only by a rule equal to the
whole command, which is what "approve for this session" remembers).

Each command is matched in a few spellings: as written, with its words unquoted, and with
leading `VAR=value` assignments and harmless wrappers (`timeout`, `nice`, `env`, `nohup`,
...) taken off. Assignments that change what runs (`PATH`, `LD_*`, `GIT_*`, `*PATH`,
`*_OPTIONS`, ...) are kept, so `PATH=/tmp/evil:$PATH git status` is not `git status`.
For deny rules only, `sudo`, `doas`, `xargs`, `watch` and every assignment are taken off
too, and `find -exec` commands are looked at.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from deftly.contract.tool import RuleMatch
from deftly.policy.rules import glob_matches
from deftly.tools.shell.scan import Scan, for_parser, heredoc_expansions, scan

MAX_PARSE_CHARS = 20_000
MAX_DEPTH = 4

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_GLOB_SPECIAL = frozenset("*?[]{}()!+@|")
_DANGEROUS_NAMES = frozenset(
    {
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "HOME",
        "SHELL",
        "CDPATH",
        "GLOBIGNORE",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PERL5DB",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
    }
)
_DANGEROUS_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "PIP_")
_DANGEROUS_SUFFIXES = ("PATH", "_OPTIONS", "OPT", "OPTS", "LIB", "_HOOK")
_HARMLESS_REDIRECT = re.compile(r"^(?:\d*[<>]&(?:\d+|-)|(?:\d*|&)>>?\s*/dev/null)$")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """How to step over a wrapper command to the command it runs."""

    value_options: frozenset[str] = frozenset()
    flags: frozenset[str] | None = None  # None: any flag
    positional: int = 0
    assignments: bool = False


def _wrapper(
    value_options: Iterable[str] = (),
    flags: Iterable[str] | None = None,
    positional: int = 0,
    assignments: bool = False,
) -> _Wrapper:
    return _Wrapper(
        frozenset(value_options),
        None if flags is None else frozenset(flags),
        positional,
        assignments,
    )


_STRICT_WRAPPERS: dict[str, _Wrapper] = {
    "timeout": _wrapper({"-s", "--signal", "-k", "--kill-after"}, positional=1),
    "nice": _wrapper({"-n", "--adjustment"}),
    "nohup": _wrapper(flags=()),
    "env": _wrapper({"-u", "--unset"}, {"-i", "--ignore-environment", "-"}, assignments=True),
    "time": _wrapper(flags={"-p"}),
    "command": _wrapper(flags={"-p"}),
    "builtin": _wrapper(flags=()),
    "exec": _wrapper({"-a"}, {"-c", "-l", "-cl", "-lc"}),
    "stdbuf": _wrapper({"-i", "-o", "-e"}),
    "setsid": _wrapper(flags={"-f", "-w", "--fork", "--wait"}),
    "ionice": _wrapper({"-c", "-n", "--class", "--classdata"}, {"-t", "--ignore"}),
}
_LOOSE_WRAPPERS: dict[str, _Wrapper] = {
    **_STRICT_WRAPPERS,
    "env": _wrapper({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assignments=True),
    "command": _wrapper(),
    "exec": _wrapper({"-a"}),
    "sudo": _wrapper(
        {"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "--user", "--group", "--host"}
    ),
    "doas": _wrapper({"-u", "-C"}),
    "xargs": _wrapper(
        {"-n", "-L", "-P", "-d", "-E", "-s", "-a", "-I", "--max-args", "--max-procs"}
    ),
    "watch": _wrapper({"-n", "--interval"}),
}


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command: `strict` spellings may satisfy an allow; `loose` ones only a
    deny."""

    text: str
    strict: tuple[str, ...]
    loose: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    """Its words (unquoted where the parser could) and redirection targets: what it may
    name as a file."""


@dataclass(frozen=True, slots=True)
class CommandSplit:
    segments: tuple[Segment, ...]
    parsed: bool
    """False when some part could not be parsed for certain: never approved by a pattern."""


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "assignment" | "word" | "redirect"
    start: int
    value: str


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def harmless_assignment(word: str) -> bool:
    """Whether `NAME=value` before a command leaves *what* runs unchanged."""
    if not _ASSIGNMENT.match(word):
        return False
    name = word.split("=", 1)[0].rstrip("+")
    upper = name.upper()
    return not (
        upper in _DANGEROUS_NAMES
        or upper.startswith(_DANGEROUS_PREFIXES)
        or upper.endswith(_DANGEROUS_SUFFIXES)
    )


def _skip_wrapper(tokens: Sequence[_Token], i: int, spec: _Wrapper, loose: bool) -> int | None:
    """From just after a wrapper's name, the index of the command it runs (None: cannot
    tell, so the wrapper stays part of the command)."""
    n = len(tokens)
    while i < n and tokens[i].kind == "word":
        value = tokens[i].value
        if value == "--":
            i += 1
            break
        if spec.assignments and _ASSIGNMENT.match(value):
            if loose or harmless_assignment(value):
                i += 1
                continue
            return i
        if value.startswith("-") and len(value) > 1:
            if value in spec.value_options:
                i += 2
                continue
            if spec.flags is None or value in spec.flags:
                i += 1
                continue
            if value.split("=", 1)[0] in spec.value_options:
                i += 1
                continue
            return None
        break
    for _ in range(spec.positional):
        if i >= n or tokens[i].kind != "word":
            return None
        i += 1
    return i if i < n else None


def _strip(tokens: Sequence[_Token], *, loose: bool) -> int:
    """How many leading tokens are assignments and wrappers (0 when nothing would be left)."""
    wrappers = _LOOSE_WRAPPERS if loose else _STRICT_WRAPPERS
    i = 0
    n = len(tokens)
    while i < n:
        token = tokens[i]
        if token.kind == "assignment":
            if loose or harmless_assignment(token.value):
                i += 1
                continue
            break
        if token.kind == "redirect":
            if loose:
                i += 1
                continue
            break
        spec = wrappers.get(token.value)
        if spec is None:
            break
        after = _skip_wrapper(tokens, i + 1, spec, loose)
        if after is None:
            break
        i = after
    return i if i < n else 0


def _joined(tokens: Sequence[_Token]) -> str:
    return " ".join(token.value for token in tokens)


class _Splitter:
    def __init__(self) -> None:
        self.segments: list[Segment] = []

    def split(self, text: str, depth: int) -> bool:
        """Add the segments of `text`; False when any part is not parsed for certain."""
        if not text.strip():
            return True
        scanned = scan(text)
        if depth > MAX_DEPTH or len(text) > MAX_PARSE_CHARS or not scanned.complete:
            self._fallback(text, scanned, depth)
            return False
        parsed = True
        for doc in scanned.heredocs:
            if not doc.expands:
                continue
            inner = heredoc_expansions(text, doc)
            if inner is None:
                parsed = False
                continue
            for command in inner:
                parsed = self.split(command, depth + 1) and parsed
        import bashlex  # here: building its grammar costs ~90 ms, paid on the first parse

        try:
            trees = bashlex.parse(for_parser(text, scanned))
        except Exception:  # bashlex raises several kinds for what it cannot parse
            self._fallback(text, scanned, depth)
            return False
        visitor = _Visitor(self, text, depth)
        for tree in trees:
            visitor.visit(tree, 0)
        for position, inner_text in scanned.substitutions:
            if position not in visitor.positions:  # e.g. inside ${x:-$(...)}
                self.split(inner_text, depth + 1)
                parsed = False
        return parsed and visitor.parsed

    def _fallback(self, text: str, scanned: Scan, depth: int) -> None:
        """Segments from the scanner alone: good enough for a deny, never for an allow."""
        for segment in scanned.segments:
            words = segment.split()
            tokens = [_Token("assignment" if _ASSIGNMENT.match(w) else "word", 0, w) for w in words]
            forms = [segment, _joined(tokens)]
            k = _strip(tokens, loose=True)
            if k:
                forms.append(_joined(tokens[k:]))
            named = tuple(_unquoted(words))
            self.segments.append(Segment(segment, _unique(forms), _unique(_unquoted(forms)), named))
        if depth < MAX_DEPTH + 2:
            for _, inner in scanned.substitutions:
                nested = scan(inner)
                self._fallback(inner, nested, depth + 1)


_REDIRECT_OPERATOR = re.compile(r"^[0-9]*(?:&>>?|<<<|<>|>&|<&|>>?\|?|<)\s*")


def _file_words(tokens: Sequence[_Token]) -> tuple[str, ...]:
    """The words and redirection targets of one command, as the parser gave them."""
    words: list[str] = []
    for token in tokens:
        if token.kind == "redirect":
            words.append(_REDIRECT_OPERATOR.sub("", token.value).strip("'\""))
        else:
            words.append(token.value)
    return tuple(word for word in words if word)


def _unquoted(forms: Iterable[str]) -> list[str]:
    return [form.replace('"', "").replace("'", "").replace("\\", "") for form in forms]


def _children(node: Any) -> Iterable[Any]:
    for attr in ("parts", "list", "redirects"):
        value = getattr(node, attr, None)
        if isinstance(value, list):
            yield from value
    for attr in ("command", "output", "heredoc"):
        value = getattr(node, attr, None)
        if hasattr(value, "kind"):
            yield value


@dataclass
class _Visitor:
    splitter: _Splitter
    source: str
    depth: int
    positions: set[int] = field(default_factory=set)
    parsed: bool = True

    def visit(self, node: Any, nesting: int) -> None:
        kind = getattr(node, "kind", None)
        if kind in ("commandsubstitution", "processsubstitution"):
            if nesting == 0:
                self.positions.add(node.pos[0])
            self.visit(node.command, nesting + 1)
            return
        if kind == "command":
            self.command(node)
        for child in _children(node):
            self.visit(child, nesting)

    def command(self, node: Any) -> None:
        tokens: list[_Token] = []
        for part in node.parts:
            start = part.pos[0]
            if part.kind == "assignment":
                tokens.append(_Token("assignment", start, part.word))
            elif part.kind == "word":
                tokens.append(_Token("word", start, part.word))
            elif part.kind == "redirect":
                end = min(part.pos[1], node.pos[1])
                tokens.append(_Token("redirect", start, self.source[start:end].strip()))
        if not tokens:
            return
        end = node.pos[1]
        text = self.source[node.pos[0] : end].strip()
        strict = [text, _joined(tokens)]
        k = _strip(tokens, loose=False)
        if k:
            strict += [self.source[tokens[k].start : end].strip(), _joined(tokens[k:])]
        quiet = [t for t in tokens[k:] if not _HARMLESS_REDIRECT.match(t.value)]
        if quiet and len(quiet) < len(tokens) - k and quiet[0].kind == "word":
            strict.append(_joined(quiet))  # `cmd 2>&1`, `cmd >/dev/null` are still `cmd`
        loose: list[str] = []
        kl = _strip(tokens, loose=True)
        if kl:
            loose += [self.source[tokens[kl].start : end].strip(), _joined(tokens[kl:])]
        run = tokens[kl:]
        loose += self._find_exec(run)
        self.splitter.segments.append(
            Segment(text, _unique(strict), _unique(loose), _file_words(tokens))
        )
        self._nested_script(run)

    @staticmethod
    def _find_exec(tokens: Sequence[_Token]) -> list[str]:
        if not tokens or os.path.basename(tokens[0].value) != "find":
            return []
        found: list[str] = []
        current: list[str] | None = None
        for token in tokens[1:]:
            if current is None:
                if token.value in _FIND_EXEC:
                    current = []
            elif token.value in (";", "+"):
                found.append(" ".join(current))
                current = None
            else:
                current.append(token.value)
        if current:
            found.append(" ".join(current))
        return found

    def _nested_script(self, tokens: Sequence[_Token]) -> None:
        """`bash -c 'script'` and `eval words` run more commands: split those too."""
        if not tokens or tokens[0].kind != "word":
            return
        name = os.path.basename(tokens[0].value)
        if name == "eval":
            script = _joined([t for t in tokens[1:] if t.kind == "word"])
            self.parsed = self.splitter.split(script, self.depth + 1) and self.parsed
            return
        if name not in _SHELLS:
            return
        words = [t.value for t in tokens[1:] if t.kind == "word"]
        i = 0
        while i < len(words):
            value = words[i]
            if value in _SHELL_VALUE_OPTIONS:
                i += 2
                continue
            if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
                if i + 1 < len(words):
                    script = words[i + 1]
                    self.parsed = self.splitter.split(script, self.depth + 1) and self.parsed
                return
            if not value.startswith(("-", "+")):
                return  # a script file, not a -c string
            i += 1


def split_command(command: str) -> CommandSplit:
    """The simple commands of a command line, for matching rules one at a time."""
    splitter = _Splitter()
    parsed = splitter.split(command, 0)
    return CommandSplit(tuple(splitter.segments), parsed and bool(splitter.segments))


def literal_pattern(pattern: str) -> str | None:
    """The text a pattern stands for when it has no glob characters (escapes removed)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in _GLOB_SPECIAL:
            return None
        out.append(c)
        i += 1
    return "".join(out)


def match_command_jointly(split: CommandSplit, command: str, patterns: Sequence[str]) -> RuleMatch:
    """FULL when the patterns together cover every simple command (each by at least one),
    or one of them is the whole command written out; PARTIAL when they cover some."""
    for pattern in patterns:
        literal = literal_pattern(pattern)
        if literal is not None and literal.strip() == command.strip():
            return RuleMatch.FULL

    def hits(forms: Iterable[str]) -> bool:
        return any(glob_matches(form, pattern) for pattern in patterns for form in forms)

    segments = split.segments
    if split.parsed and all(hits(segment.strict) for segment in segments):
        return RuleMatch.FULL
    if any(hits(segment.strict) or hits(segment.loose) for segment in segments):
        return RuleMatch.PARTIAL
    whole = command.strip()
    if any(glob_matches(whole, pattern) for pattern in patterns):
        return RuleMatch.PARTIAL
    return RuleMatch.NONE


@dataclass
class CommandMatcher:
    """`ToolExecution.matches_rule` and `matches_rules` for one shell command (parsed on
    first use, once)."""

    command: str
    _split: CommandSplit | None = None

    @property
    def split(self) -> CommandSplit:
        if self._split is None:
            self._split = split_command(self.command)
        return self._split

    def one(self, pattern: str) -> RuleMatch:
        return match_command_jointly(self.split, self.command, (pattern,))

    def together(self, patterns: Sequence[str]) -> RuleMatch:
        return match_command_jointly(self.split, self.command, patterns)
