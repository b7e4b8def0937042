"""Permission rules for shell commands, matched one simple command at a time.

`git status && rm -rf x` is two commands. A rule `Bash(pattern)` covers the call FULLy
only when it covers every one of them; covering some is PARTIAL (enough for a deny, never
for an allow). Commands are found with a real parser (bashlex), inside `$(...)`,
backticks, process substitutions, expanding here-documents, `bash -c '...'` and `eval`,
and cross-checked by a quote-aware scanner: a substitution the parser did not see, a
construct it cannot parse, or anything left unclosed makes the command "not parsed", and
a command that is not parsed is never approved by a pattern (only by a rule equal to the
whole command, which is what "approve for this session" remembers). In a pattern `*`
matches any characters, `/` included; `prefix:*` is `prefix` alone or followed by a space.

Each command is matched in a few spellings: as written, with its words unquoted (by our
own unquoting: `r''m`, `\rm`, `$'\x72m'` are `rm`), and with leading `VAR=value`
assignments and harmless wrappers (`timeout`, `nice`, `env`, `command`, `exec`, `coproc`,
...) taken off. Assignments that change what runs (`PATH`, `LD_*`, `GIT_*`, `*PATH`,
`*_OPTIONS`, ...) are kept, so `PATH=/tmp/evil:$PATH git status` is not `git status`.
The command word is normalised: for an allow rule `/usr/bin/git` is `git` (a system bin
directory), `./git` is not; for deny and ask rules every path is its base name, and
`sudo`, `doas`, `xargs` (which adds arguments: `xargs rm` meets `rm -rf *`), `watch` and
every assignment are taken off too, and `find -exec` commands are looked at.

What cannot be known from the text is "opaque" (`CommandSplit.opaque`, one reason each): a
command word from an expansion (`$X f`), a shell reading a script or its input (`bash
s.sh`, `... | bash`, `source f`), an interpreter given code (`python3 -c`, `perl -e`), output
to a file named by an expansion. An opaque command is never parsed for certain.
`Segment.redirects` lists the files a command's output goes to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from deftly.contract.records import frozen
from deftly.contract.tool import RuleMatch
from deftly.features.shell.commands import (
    ARGUMENT_FEEDERS,
    FIND_EXEC,
    LOOSE_WRAPPERS,
    SHELLS,
    SOURCE_COMMANDS,
    STRICT_WRAPPERS,
    SWITCH_USER,
    TEE,
    Wrapper,
    command_name,
    harmless_output,
    interpreter,
    interpreter_reason,
    shell_reason,
    stdin_reason,
    switch_user_script,
    tee_targets,
)
from deftly.features.shell.scan import (
    Scan,
    for_parser,
    heredoc_expansions,
    scan,
    shell_words,
    unquote,
)
from deftly.policy.rules import glob_matches, prefix_form, text_matches

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
_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_FALLBACK_REDIRECT = re.compile(
    r"(?:^|(?<=[\s;&|()]))(?:[0-9]*|&)(?:>>?\|?|<>|>&)[ \t]*((?:'[^']*'|\"[^\"]*\"|[^\s;&|()<>])+)"
)


@frozen
class Segment:
    """One simple command: `strict` spellings may satisfy an allow; `loose` ones only a
    deny or an ask."""

    text: str
    strict: tuple[str, ...]
    loose: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    """Its words (unquoted where the parser could) and redirection targets: what it may
    name as a file."""
    redirects: tuple[str, ...] = ()
    """The files its output is redirected to (`>`, `>>`, `>|`, `&>`, `N>`, `<>`, and the
    files `tee` writes), unquoted, in order; never fd duplications (`2>&1`) or /dev/null,
    the standard streams, a terminal."""
    fed: tuple[str, ...] = ()
    """Spellings of a command that is given more arguments from its input (`xargs rm`):
    a deny or ask rule for any extension of them applies."""


@frozen
class CommandSplit:
    """A command line cut into the segments rules are matched against."""

    segments: tuple[Segment, ...]
    parsed: bool
    """False when some part could not be parsed for certain, or is opaque: never approved
    by a pattern."""
    opaque: tuple[str, ...] = ()
    """Why some of what runs cannot be known from the text (a command word from an
    expansion, a shell reading a script or its input, an interpreter given code), one
    short reason per finding; empty when everything is static."""


@frozen
class _Token:
    kind: str  # "assignment" | "word" | "redirect"
    start: int
    value: str
    raw: str = ""
    """The word as written (quotes kept), to tell expansions from literal text."""
    dynamic: bool = False
    """A word whose value comes from an expansion (`$X`, `$(...)`, an unquoted glob)."""
    target: str | None = None
    """For an output redirection into a file: the file."""


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


def raw_is_dynamic(raw: str) -> bool:
    """Whether a word as written expands: `$`, a backtick, or an unquoted glob or brace
    (`/usr/bin/r[m]`, `{rm,x}` run `rm`). `$'...'` and `$"..."` are quoting, not
    expansions."""
    i = 0
    quote = ""  # "'", '"', or "$'" (ANSI-C: backslash escapes inside)
    while i < len(raw):
        c = raw[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            if c == quote[-1]:
                quote = ""
            elif quote == '"' and c in "$`":
                return True
        elif raw.startswith(("$'", '$"'), i):
            quote = raw[i : i + 2] if raw[i + 1] == "'" else '"'
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif (
            c in "$`*?"
            or (c == "[" and "]" in raw[i + 1 :])
            or (c == "{" and ("," in raw[i:] or ".." in raw[i:]))
        ):
            return True
        i += 1
    return False


def _skip_wrapper(tokens: Sequence[_Token], i: int, spec: Wrapper, loose: bool) -> int | None:
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
        if value == "-" and spec.assignments:
            i += 1
            continue
        if value.startswith("-") and len(value) > 1:
            if value in spec.value_options:
                i += 2
                continue
            if spec.flags is None or value in spec.flags or loose:
                i += 1  # for a deny or ask rule, an unknown flag is still a flag
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


def _command_start(tokens: Sequence[_Token], *, loose: bool) -> int:
    """The index of the command word after leading assignments and wrappers (len(tokens)
    when there is none)."""
    wrappers = LOOSE_WRAPPERS if loose else STRICT_WRAPPERS
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
        if token.dynamic:
            break
        spec = wrappers.get(command_name(token.value, loose=loose))
        if spec is None:
            break
        after = _skip_wrapper(tokens, i + 1, spec, loose)
        if after is None:
            break
        i = after
    return i


def _strip(tokens: Sequence[_Token], *, loose: bool) -> int:
    """How many leading tokens are assignments and wrappers (0 when nothing would be left)."""
    i = _command_start(tokens, loose=loose)
    return i if i < len(tokens) else 0


def _joined(tokens: Sequence[_Token]) -> str:
    return " ".join(token.value for token in tokens)


def _named(tokens: Sequence[_Token], *, loose: bool) -> str:
    """The tokens joined, the command word as a rule names it (`/usr/bin/rm` → `rm`)."""
    if not tokens or tokens[0].kind != "word":
        return _joined(tokens)
    head = command_name(tokens[0].value, loose=loose)
    return " ".join([head, *(token.value for token in tokens[1:])])


def _words(tokens: Sequence[_Token]) -> list[str]:
    return [token.value for token in tokens if token.kind == "word"]


def _feeds_arguments(wrappers: Sequence[_Token]) -> bool:
    """Whether a wrapper before the command adds arguments to it (`xargs`)."""
    return any(
        token.kind == "word" and command_name(token.value, loose=True) in ARGUMENT_FEEDERS
        for token in wrappers
    )


def _env_split_string(tokens: Sequence[_Token]) -> str | None:
    """The command line `env -S STRING rest...` runs (STRING split into words, then the
    rest), or None when no `env` here splits a string."""
    words = [t.value for t in tokens if t.kind == "word"]
    for i, word in enumerate(words):
        if command_name(word, loose=True) != "env":
            continue
        skip = False
        for j in range(i + 1, len(words)):
            value = words[j]
            if skip:
                skip = False
                continue
            if value in ("-u", "--unset", "-C", "--chdir"):
                skip = True
                continue
            if value in ("-S", "--split-string") and j + 1 < len(words):
                return " ".join([words[j + 1], *words[j + 2 :]])
            if value.startswith("--split-string="):
                return " ".join([value.partition("=")[2], *words[j + 1 :]])
            if value.startswith("-S") and len(value) > 2:
                return " ".join([value[2:], *words[j + 1 :]])
            if not value.startswith("-") and not _ASSIGNMENT.match(value):
                break
    return None


def _find_exec(tokens: Sequence[_Token]) -> list[list[_Token]]:
    """The commands `find ... -exec CMD ... ;` runs."""
    if not tokens or command_name(tokens[0].value, loose=True) != "find":
        return []
    found: list[list[_Token]] = []
    current: list[_Token] | None = None
    for token in tokens[1:]:
        if current is None:
            if token.value in FIND_EXEC:
                current = []
        elif token.value in (";", "+"):
            if current:
                found.append(current)
            current = None
        else:
            current.append(token)
    if current:
        found.append(current)
    return found


_REDIRECT_WORD = re.compile(r"^(?:[0-9]*|&)(?:>>?\|?|<>|>&|<&|<<<|<)")


def _fallback_tokens(words: Sequence[str]) -> list[_Token]:
    """Tokens from whitespace-split words: `2>err` and `> out` are redirections."""
    tokens: list[_Token] = []
    glued = False
    for word in words:
        operator = _REDIRECT_WORD.match(word)
        if glued or operator is not None:
            kind = "redirect"
            glued = operator is not None and operator.end() == len(word)
        elif _ASSIGNMENT.match(word) and all(t.kind != "word" for t in tokens):
            kind, glued = "assignment", False
        else:
            kind, glued = "word", False
        tokens.append(_Token(kind, 0, unquote(word), word, raw_is_dynamic(word)))
    return tokens


class _Splitter:
    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.opaque: list[str] = []

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
        bodies = {doc.op_start: text[doc.body_start : doc.body_end] for doc in scanned.heredocs}
        visitor = _Visitor(self, text, depth, dict(scanned.substitutions), bodies)
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
            words = shell_words(segment)
            tokens = _fallback_tokens(words)
            forms = [segment, _joined(tokens), " ".join(words)]
            k = _strip(tokens, loose=True)
            if k:
                forms += [_joined(tokens[k:]), " ".join(words[k:])]
            run = tokens[k:]
            forms.append(_named(run, loose=True))
            forms += [_named(sub, loose=True) for sub in _find_exec(run)]
            named = tuple(_unquoted(words))
            redirects = [
                target
                for target in _unquoted(m.group(1) for m in _FALLBACK_REDIRECT.finditer(segment))
                if target and not target.isdigit() and target != "-" and not harmless_output(target)
            ]
            if run and command_name(run[0].value, loose=True) == TEE:
                redirects += [t for t in tee_targets(_words(run[1:])) if not harmless_output(t)]
            self.segments.append(
                Segment(
                    segment, _unique(forms), _unique(_unquoted(forms)), named, _unique(redirects)
                )
            )
            index = self.note_opaque(segment, run)
            if depth < MAX_DEPTH + 2:
                self._fallback_nested(run, index, depth)
        if depth < MAX_DEPTH + 2:
            for _, inner in scanned.substitutions:
                nested = scan(inner)
                self._fallback(inner, nested, depth + 1)

    def _fallback_nested(self, run: Sequence[_Token], index: int | None, depth: int) -> None:
        """The scripts of `eval ...` and `bash -c '...'` in a segment the parser could not
        read."""
        words = [token for token in run if token.kind == "word"]
        if words and command_name(words[0].value, loose=True) == "eval":
            self.split(_joined(words[1:]), depth + 1)
        elif index is not None and index < len(words):
            self.split(words[index].value.removeprefix("--command="), depth + 1)

    def note_opaque(self, text: str, run: Sequence[_Token]) -> int | None:
        """Record why the command `run` (wrappers taken off) cannot be known; for a shell
        given `-c`, the index of its script among the words of `run`."""
        words = [token for token in run if token.kind == "word"]
        if not words:
            return None
        head = words[0]
        if head.dynamic:
            self.opaque.append(f"the command word of {_code(text)} comes from an expansion")
            return None
        name = command_name(head.value, loose=True)
        rest = [token.value for token in words[1:]]
        if name in SOURCE_COMMANDS:
            sourced = rest[0] if rest else "from its standard input"
            self.opaque.append(f"{name} runs the script {sourced}, which deftly cannot inspect")
            return None
        if name in SHELLS:
            reason, index = shell_reason(name, rest)
            if reason is not None:
                self.opaque.append(reason)
            return None if index is None else index + 1
        if name == "trap":
            return _trap_command(rest)
        if name in SWITCH_USER:
            index = switch_user_script(rest)
            return None if index is None else index + 1
        spec = interpreter(name)
        if spec is not None:
            reason = interpreter_reason(name, spec, rest)
            if reason is not None:
                self.opaque.append(reason)
        return None


def _trap_command(operands: list[str]) -> int | None:
    """Where the command of `trap [--] 'command' SIGNAL...` is among the words after
    `trap` (1-based), or None when it sets none. POSIX: with one operand, or a first
    operand that is an unsigned integer (`trap 0`), every operand is a signal to reset."""
    skip = 1 if operands[:1] == ["--"] else 0
    rest = operands[skip:]
    if skip == 0 and rest and rest[0].startswith("-"):
        return None  # `trap -p`, `trap -l`, `trap - INT`: no command
    if len(rest) < 2 or rest[0].isdigit():
        return None
    return skip + 1  # the command runs later, when the signal comes


def _code(text: str, limit: int = 60) -> str:
    """A command quoted as code in a message (shortened, on one line)."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"`` {text} ``" if "`" in text else f"`{text}`"


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


def _word_dynamic(part: Any, source: str) -> bool:
    """From the text as written: bashlex takes `$'...'` for a parameter."""
    return raw_is_dynamic(source[part.pos[0] : part.pos[1]])


def _output_target(part: Any) -> Any | None:
    """The word node an output redirection writes to (None: not a file written)."""
    output: Any = getattr(part, "output", None)
    if getattr(output, "kind", None) != "word":
        return None
    kind = part.type
    if kind in _OUTPUT_REDIRECTS:
        return output
    if kind == ">&" and not (output.word.isdigit() or output.word == "-"):
        return output  # `>&file` is `&>file`
    return None


@dataclass
class _Visitor:
    splitter: _Splitter
    source: str
    depth: int
    substitutions: dict[int, str] = field(default_factory=dict)
    """What the scanner found inside each top-level substitution, by position."""
    heredocs: dict[int, str] = field(default_factory=dict)
    """The body of each here-document, by the position of its `<<`."""
    positions: set[int] = field(default_factory=set)
    parsed: bool = True

    def visit(self, node: Any, nesting: int) -> None:
        kind = getattr(node, "kind", None)
        if kind in ("commandsubstitution", "processsubstitution"):
            inner = self.substitutions.get(node.pos[0]) if nesting == 0 else None
            if nesting == 0:
                self.positions.add(node.pos[0])
            if inner is not None:
                # split the scanner's text, not the parser's tree: bashlex drops what
                # follows a newline inside `$(...)`
                self.parsed = self.splitter.split(inner, self.depth + 1) and self.parsed
                return
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
            raw = self.source[start : part.pos[1]]
            if part.kind == "assignment":
                tokens.append(_Token("assignment", start, unquote(raw), raw))
            elif part.kind == "word":
                tokens.append(
                    _Token("word", start, unquote(raw), raw, _word_dynamic(part, self.source))
                )
            elif part.kind == "redirect":
                end = min(part.pos[1], node.pos[1])
                target = _output_target(part)
                if target is not None and _word_dynamic(target, self.source):
                    self.splitter.opaque.append(
                        f"{_code(self.source[start:end])} writes to a file named by an expansion"
                    )
                tokens.append(
                    _Token(
                        "redirect",
                        start,
                        self.source[start:end].strip(),
                        target=None
                        if target is None
                        else unquote(self.source[target.pos[0] : target.pos[1]]),
                    )
                )
        if not tokens:
            return
        end = node.pos[1]
        text = self.source[node.pos[0] : end].strip()
        strict = [text, _joined(tokens)]
        k = _strip(tokens, loose=False)
        if k:
            strict += [self.source[tokens[k].start : end].strip(), _joined(tokens[k:])]
        strict.append(_named(tokens[k:], loose=False))
        quiet = [t for t in tokens[k:] if not _HARMLESS_REDIRECT.match(t.value)]
        if quiet and len(quiet) < len(tokens) - k and quiet[0].kind == "word":
            strict += [_joined(quiet), _named(quiet, loose=False)]  # `cmd 2>&1` is `cmd`
        loose: list[str] = []
        kl = _strip(tokens, loose=True)
        if kl:
            loose += [self.source[tokens[kl].start : end].strip(), _joined(tokens[kl:])]
        run = tokens[kl:]
        loose.append(_named(run, loose=True))
        redirects = [t.target for t in tokens if t.target is not None]
        if run and command_name(run[0].value, loose=True) == TEE:
            redirects += tee_targets(_words(run[1:]))
        fed = [_named(run, loose=True)] if _feeds_arguments(tokens[:kl]) else []
        for sub in _find_exec(run):
            loose.append(_joined(sub))
            inner = sub[_strip(sub, loose=True) :]
            loose.append(_named(inner, loose=True))
            self._nested(inner, " ".join(t.value for t in sub))
        self.splitter.segments.append(
            Segment(
                text,
                _unique(strict),
                _unique(loose),
                _file_words(tokens),
                _unique(r for r in redirects if not harmless_output(r)),
                _unique(fed),
            )
        )
        self._nested(run, text)
        self._stdin_scripts(run, tokens)
        script = _env_split_string(tokens)
        if script is not None:  # `env -S 'rm -rf x' ...` runs that command line
            self.parsed = self.splitter.split(script, self.depth + 1) and self.parsed

    def _stdin_scripts(self, run: Sequence[_Token], tokens: Sequence[_Token]) -> None:
        """`bash <<EOF ... EOF` and `sh <<< 'rm x'` run their input: split it too, so a
        deny rule still applies (the command stays opaque)."""
        words = _words(run)
        if not words or command_name(words[0], loose=True) not in SHELLS:
            return
        name = command_name(words[0], loose=True)
        if shell_reason(name, words[1:])[0] != stdin_reason(name):
            return
        for token in tokens:
            if token.kind != "redirect":
                continue
            body = self.heredocs.get(token.start)
            if body is None and token.value.startswith("<<<"):
                body = unquote(token.value[3:].strip())
            if body is not None:
                self.parsed = self.splitter.split(body, self.depth + 1) and self.parsed

    def _nested(self, run: Sequence[_Token], text: str) -> None:
        """Note what is opaque about `run`; `bash -c 'script'` and `eval words` run more
        commands: split those too."""
        words = [t for t in run if t.kind == "word"]
        if not words:
            return
        if not words[0].dynamic and command_name(words[0].value, loose=True) == "eval":
            script = _joined(words[1:])
            self.parsed = self.splitter.split(script, self.depth + 1) and self.parsed
            return
        index = self.splitter.note_opaque(text, run)
        if index is not None and index < len(words):
            script = words[index].value.removeprefix("--command=")
            self.parsed = self.splitter.split(script, self.depth + 1) and self.parsed


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


def split_command(command: str) -> CommandSplit:
    """The simple commands of a command line, for matching rules one at a time."""
    splitter = _Splitter()
    parsed = splitter.split(command, 0)
    opaque = _unique(splitter.opaque)
    return CommandSplit(
        tuple(splitter.segments), parsed and bool(splitter.segments) and not opaque, opaque
    )


def _literal_start(pattern: str) -> tuple[str, bool]:
    """The text up to the first glob character (escapes removed), and whether that is the
    whole pattern."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in _GLOB_SPECIAL:
            return "".join(out), False
        out.append(c)
        i += 1
    return "".join(out), True


def literal_pattern(pattern: str) -> str | None:
    """The text a pattern stands for when it has no glob characters (escapes removed)."""
    text, whole = _literal_start(pattern)
    return text if whole else None


def _literal_head(pattern: str) -> str:
    """The text every subject of `pattern` starts with (up to its first glob character)."""
    prefix = prefix_form(pattern)
    return _literal_start(pattern if prefix is None else prefix + " *")[0]


def command_matches(form: str, pattern: str) -> bool:
    """One spelling of a command against one pattern: `*` crosses `/`, no `./` leeway
    (`./rm` is not the `rm` an allow rule names), `!` negates."""
    if not pattern:
        return True
    if pattern.startswith("!") and not pattern.startswith("!("):
        return not text_matches(form, pattern[1:])
    return text_matches(form, pattern)


def _fed_matches(form: str, pattern: str) -> bool:
    """Whether `pattern` may cover `form` once more arguments are added (`xargs rm` runs
    `rm` with arguments from its input, so `rm -rf *` may apply)."""
    if pattern.startswith("!") and not pattern.startswith("!("):
        return False
    head = _literal_head(pattern)
    return bool(head) and (head.startswith(form + " ") or (form + " ").startswith(head))


def match_command_jointly(split: CommandSplit, command: str, patterns: Sequence[str]) -> RuleMatch:
    """FULL when the patterns together cover every simple command (each by at least one),
    or one of them is the whole command written out; PARTIAL when they cover some."""
    for pattern in patterns:
        literal = literal_pattern(pattern)
        if literal is not None and literal.strip() == command.strip():
            return RuleMatch.FULL

    def hits(forms: Iterable[str]) -> bool:
        return any(command_matches(form, pattern) for pattern in patterns for form in forms)

    def fed(forms: Iterable[str]) -> bool:
        return any(_fed_matches(form, pattern) for pattern in patterns for form in forms)

    segments = split.segments
    if split.parsed and all(hits(segment.strict) for segment in segments):
        return RuleMatch.FULL
    if any(hits(segment.strict) or hits(segment.loose) or fed(segment.fed) for segment in segments):
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
        """The command's segments (split once, on first use)."""
        if self._split is None:
            self._split = split_command(self.command)
        return self._split

    def one(self, pattern: str) -> RuleMatch:
        """How one rule pattern matches the command."""
        return match_command_jointly(self.split, self.command, (pattern,))

    def together(self, patterns: Sequence[str]) -> RuleMatch:
        """How several patterns match the command when they may cover different segments."""
        return match_command_jointly(self.split, self.command, patterns)
