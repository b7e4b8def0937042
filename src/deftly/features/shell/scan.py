"""A careful, quote-aware scanner for shell command lines.

It does not parse the grammar (bashlex does that); it finds what a permission check must
never miss: where command substitutions (`$(...)`, backticks, `<(...)`, `>(...)`) start
and what they hold, where here-documents are and whether their bodies expand, and, as a
fallback when the parser gives up, the simple commands between `&&`, `||`, `;`, `|`, `&`,
parentheses and newlines. Everything that is not closed (a quote, a parenthesis) makes
the scan incomplete, and an incomplete scan is never trusted to approve anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deftly.contract.records import frozen

_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
_WORD_BREAK = frozenset(" \t\n;&|()<>")
_RESERVED_LEAD = frozenset(
    {
        "{",
        "}",
        "!",
        "if",
        "then",
        "else",
        "elif",
        "while",
        "until",
        "do",
        "time",
        "coproc",
        "fi",
        "done",
    }
)
_NOT_COMMANDS = frozenset({"for", "select", "case", "in", "esac", "function"})


@frozen
class Heredoc:
    """A here-document: its operator and delimiter span, its body span, and whether the
    body expands (`$(...)` in an unquoted here-document runs)."""

    op_start: int
    op_end: int
    body_start: int
    body_end: int
    expands: bool


@dataclass(slots=True)
class Scan:
    """What a lexical pass over a command found: segments, substitutions, heredocs."""

    segments: list[str] = field(default_factory=list)
    substitutions: list[tuple[int, str]] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    keywords: list[tuple[int, int]] = field(default_factory=list)
    """Spans of a leading `time` (and its `-p`) or `coproc` (and its NAME before a
    compound command), which the parser cannot read."""
    complete: bool = True


class _Incomplete(Exception):
    """A quote, parenthesis or backtick that is never closed."""


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.out = Scan()

    # -- nested regions ------------------------------------------------------------------

    def skip_single(self, i: int) -> int:
        """From just after an opening `'`, the index after the closing one."""
        end = self.text.find("'", i)
        if end < 0:
            raise _Incomplete
        return end + 1

    def skip_double(self, i: int, *, record: bool, heredoc: bool = False) -> int:
        """From just after an opening `"`, the index after the closing one. Inside, `$(`
        and backticks still run. In a here-document body `"` is an ordinary character."""
        text = self.text
        while i < self.n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"' and not heredoc:
                return i + 1
            if c == "`":
                i = self.backtick(i, record=record)
                continue
            if c == "$" and text.startswith("(", i + 1):
                i = self.dollar_paren(i, record=record)
                continue
            i += 1
        if heredoc:
            return i
        raise _Incomplete

    def backtick(self, i: int, *, record: bool) -> int:
        j = i + 1
        while j < self.n:
            if self.text[j] == "\\":
                j += 2
                continue
            if self.text[j] == "`":
                if record:
                    self.out.substitutions.append((i, self.text[i + 1 : j]))
                return j + 1
            j += 1
        raise _Incomplete

    def dollar_paren(self, i: int, *, record: bool) -> int:
        """`$(` or `<(`/`>(` at i: the index after the matching `)`."""
        close = self.matching_paren(i + 2)
        if record:
            self.out.substitutions.append((i, self.text[i + 2 : close]))
        return close + 1

    def matching_paren(self, i: int) -> int:
        depth = 1
        text = self.text
        while i < self.n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                i = self.skip_single(i + 1)
                continue
            if c == '"':
                i = self.skip_double(i + 1, record=False)
                continue
            if c == "`":
                i = self.backtick(i, record=False)
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise _Incomplete

    # -- here-documents ------------------------------------------------------------------

    def heredoc_operator(self, i: int) -> tuple[int, str, bool, bool]:
        """At `<<`: (index after the delimiter word, delimiter, quoted, strip tabs)."""
        text = self.text
        j = i + 2
        strip_tabs = text.startswith("-", j)
        if strip_tabs:
            j += 1
        while j < self.n and text[j] in " \t":
            j += 1
        start = j
        delimiter: list[str] = []
        quoted = False
        while j < self.n and text[j] not in _WORD_BREAK:
            c = text[j]
            if c in "'\"":
                quoted = True
                end = text.find(c, j + 1)
                if end < 0:
                    raise _Incomplete
                delimiter.append(text[j + 1 : end])
                j = end + 1
            elif c == "\\":
                quoted = True
                delimiter.append(text[j + 1 : j + 2])
                j += 2
            else:
                delimiter.append(c)
                j += 1
        if j == start:
            raise _Incomplete
        return j, "".join(delimiter), quoted, strip_tabs

    def heredoc_body(self, start: int, delimiter: str, strip_tabs: bool) -> tuple[int, int]:
        """From the first body line: (end of the body, index after the terminator line)."""
        text = self.text
        i = start
        while i <= self.n:
            end = text.find("\n", i)
            line_end = self.n if end < 0 else end
            line = text[i:line_end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                return i, (line_end + 1 if end >= 0 else self.n)
            if end < 0:
                break
            i = end + 1
        raise _Incomplete

    # -- the top level -------------------------------------------------------------------

    def run(self) -> Scan:
        try:
            self._top()
        except _Incomplete:
            self.out.complete = False
        return self.out

    def _top(self) -> None:
        text = self.text
        i = 0
        seg_start = 0
        pending: list[tuple[int, int, str, bool, bool]] = []
        while i < self.n:
            c = text[i]
            word_start = i == 0 or text[i - 1] in _WORD_BREAK
            if c == "\\":
                i += 2
                continue
            if c == "'":
                i = self.skip_single(i + 1)
                continue
            if c == '"':
                i = self.skip_double(i + 1, record=True)
                continue
            if c == "`":
                i = self.backtick(i, record=True)
                continue
            if c in "$<>" and text.startswith("(", i + 1):
                i = self.dollar_paren(i, record=True)
                continue
            if c == "#" and word_start:
                newline = text.find("\n", i)
                self._emit(seg_start, i)
                seg_start = i = self.n if newline < 0 else newline
                continue
            if text.startswith("<<<", i):
                i += 3
                continue
            if text.startswith("<<", i):
                end, delimiter, quoted, strip_tabs = self.heredoc_operator(i)
                pending.append((i, end, delimiter, quoted, strip_tabs))
                i = end
                continue
            if c == "\n":
                self._emit(seg_start, i)
                i += 1
                for op_start, op_end, delimiter, quoted, strip_tabs in pending:
                    body_end, after = self.heredoc_body(i, delimiter, strip_tabs)
                    self.out.heredocs.append(Heredoc(op_start, op_end, i, body_end, not quoted))
                    i = after
                pending.clear()
                seg_start = i
                continue
            op = self._operator(i)
            if op:
                self._emit(seg_start, i)
                i += len(op)
                seg_start = i
                continue
            i += 1
        if pending:
            raise _Incomplete
        self._emit(seg_start, self.n)

    def _operator(self, i: int) -> str | None:
        text = self.text
        for op in _OPERATORS:
            if not text.startswith(op, i):
                continue
            before = text[i - 1] if i else ""
            after = text[i + len(op)] if i + len(op) < self.n else ""
            if op.startswith("&") and (before in "<>" or after == ">"):
                return None  # a redirection: 2>&1, &>file, <&3
            if op.startswith("|") and before == ">":
                return None  # >| (clobber)
            return op
        return None

    def _emit(self, start: int, end: int) -> None:
        self._note_time_keyword(start, end)
        words = self.text[start:end].split()
        while words and words[0] in _RESERVED_LEAD:
            words.pop(0)
        while words and words[-1] in ("}", "fi", "done"):
            words.pop()
        if words and words[0] not in _NOT_COMMANDS:
            segment = self.text[start:end].strip()
            self.out.segments.append(_drop_reserved(segment))

    def _note_time_keyword(self, start: int, end: int) -> None:
        match = _TIME.match(self.text, start, end)
        if match:
            self.out.keywords.append((match.start(1), match.end(1)))


_TIME = re.compile(
    r"[ \t]*(time(?:[ \t]+-p)?(?=[ \t])|coproc(?:[ \t]+[A-Za-z_][A-Za-z0-9_]*(?=[ \t]*[{(]))?"
    r"(?=[ \t{(]))"
)


def _drop_reserved(segment: str) -> str:
    parts = segment.split(None, 1)
    while parts and parts[0] in _RESERVED_LEAD:
        segment = parts[1] if len(parts) > 1 else ""
        if parts[0] == "coproc":
            segment = _COPROC_NAME.sub("", segment)
        parts = segment.split(None, 1)
    for tail in (" }", ";}", " fi", " done"):
        segment = segment.removesuffix(tail)
    return segment.strip()


_COPROC_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*[ \t]+(?=[{(])")


def scan(text: str) -> Scan:
    """Scan one command line (not recursing into substitutions)."""
    return _Scanner(text).run()


def heredoc_expansions(text: str, heredoc: Heredoc) -> list[str] | None:
    """The commands substituted in an expanding here-document body (None: unclosed)."""
    scanner = _Scanner(text[: heredoc.body_end])
    try:
        scanner.skip_double(heredoc.body_start, record=True, heredoc=True)
    except _Incomplete:
        return None
    return [inner for _, inner in scanner.out.substitutions]


def for_parser(text: str, scanned: Scan) -> str:
    """The text with what the parser cannot read made harmless, every position kept:
    `<<'EOF'` becomes `< 'EOF'` (same length), here-document bodies become blank lines and
    a leading `time` keyword becomes spaces."""
    chars = list(text)
    for start, end in scanned.keywords:
        chars[start:end] = " " * (end - start)
    heredocs = scanned.heredocs
    for doc in heredocs:
        chars[doc.op_start + 1] = " "
        if chars[doc.op_start + 2] == "-":
            chars[doc.op_start + 2] = " "
        for k in range(doc.body_start, min(_terminator_end(text, doc), len(chars))):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def _terminator_end(text: str, doc: Heredoc) -> int:
    end = text.find("\n", doc.body_end)
    return len(text) if end < 0 else end


_ANSI_C = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}")


def unquote(raw: str) -> str:
    """A shell word as the command receives it, quotes and escapes removed (`r''m`,
    `\\rm`, `"rm"`, `$'\\x72m'` are all `rm`); expansions are kept as written (`$X`,
    `$(...)`, backticks). The parser's own unquoting is not trusted: it keeps or drops
    quotes in words like `'a'"'"'b'`."""
    out: list[str] = []
    scanner = _Scanner(raw)
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 < n and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            end = n if end < 0 else end
            out.append(raw[i + 1 : end])
            i = end + 1
        elif raw.startswith("$'", i):
            i = _ansi_c(raw, i + 2, out)
        elif c == '"' or raw.startswith('$"', i):
            i = _double_quoted(raw, i + (1 if c == '"' else 2), out, scanner)
        elif c in "$`" and (c == "`" or raw.startswith("$(", i)):
            i = _verbatim_substitution(raw, i, out, scanner)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ansi_c(raw: str, i: int, out: list[str]) -> int:
    n = len(raw)
    while i < n and raw[i] != "'":
        if raw[i] == "\\" and i + 1 < n:
            number = _ANSI_NUMERIC.match(raw, i + 1)
            if number is not None:
                digits = number.group()
                base = 8 if digits[0].isdigit() else 16
                value = int(digits if base == 8 else digits[1:], base)
                out.append(chr(value) if value < 0x110000 else "?")
                i = number.end()
                continue
            out.append(_ANSI_C.get(raw[i + 1], "\\" + raw[i + 1]))
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return i + 1


def _double_quoted(raw: str, i: int, out: list[str], scanner: _Scanner) -> int:
    n = len(raw)
    while i < n and raw[i] != '"':
        c = raw[i]
        if c == "\\" and i + 1 < n:
            if raw[i + 1] in '$`"\\':
                out.append(raw[i + 1])
            elif raw[i + 1] != "\n":
                out.append(raw[i : i + 2])
            i += 2
        elif c == "`" or raw.startswith("$(", i):
            i = _verbatim_substitution(raw, i, out, scanner)
        else:
            out.append(c)
            i += 1
    return i + 1


def _verbatim_substitution(raw: str, i: int, out: list[str], scanner: _Scanner) -> int:
    """Copy `$(...)` or a backtick substitution as written (it is an expansion)."""
    try:
        end = (
            scanner.backtick(i, record=False)
            if raw[i] == "`"
            else scanner.matching_paren(i + 2) + 1
        )
    except _Incomplete:
        end = len(raw)
    out.append(raw[i:end])
    return end


def shell_words(text: str) -> list[str]:
    """Split on unquoted blanks, each word kept as written (quotes and substitutions
    intact): the scanner's segments into words, for the fallback."""
    scanner = _Scanner(text)
    words: list[str] = []
    start: int | None = None
    i, n = 0, len(text)
    try:
        while i < n:
            c = text[i]
            if c in " \t\n":
                if start is not None:
                    words.append(text[start:i])
                    start = None
                i += 1
                continue
            if start is None:
                start = i
            if c == "\\":
                i += 2
            elif c == "'":
                i = scanner.skip_single(i + 1)
            elif c == '"':
                i = scanner.skip_double(i + 1, record=False)
            elif c == "`":
                i = scanner.backtick(i, record=False)
            elif c in "$<>" and text.startswith("(", i + 1):
                i = scanner.matching_paren(i + 2) + 1
            else:
                i += 1
    except _Incomplete:
        i = n
    if start is not None:
        words.append(text[start:])
    return words
