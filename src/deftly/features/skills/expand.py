"""Filling a skill's body with the arguments it was loaded with.

Placeholders, all replaced in one pass (a value is inserted as it is and never expanded
again, so an argument holding `$1` stays `$1`):

- `$ARGUMENTS`: the whole argument string;
- `$ARGUMENTS[i]`, `$i`: the i-th argument (from 0), split like a shell does (quotes group
  words and are removed); a missing one is empty;
- `$name`: the argument at the position of `name` in the front matter's `arguments`;
- `${DEFTLY_SKILL_DIR}`: the skill's folder, so it can run its own scripts;
  `${DEFTLY_SESSION_ID}`: the runtime's session id. (`${CLAUDE_SKILL_DIR}` and
  `${CLAUDE_SESSION_ID}` are accepted too, so skills written for Claude Code work.)

Argument values have `<` and `>` escaped so they cannot open or close tags. When the body
uses no argument placeholder, the arguments are appended as a final `ARGUMENTS:` line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = "[A-Za-z0-9_]"
_DIR_NAMES = frozenset({"DEFTLY_SKILL_DIR", "CLAUDE_SKILL_DIR"})
_ENV = r"\$\{(?P<env>DEFTLY_SKILL_DIR|DEFTLY_SESSION_ID|CLAUDE_SKILL_DIR|CLAUDE_SESSION_ID)\}"
_INDEXED = r"\$ARGUMENTS\[(?P<indexed>\d+)\]"
_POSITIONAL = rf"\$(?P<positional>\d+)(?!{_WORD})"
_ALL = r"(?P<all>\$ARGUMENTS)"
_BASE = re.compile("|".join((_INDEXED, _POSITIONAL, _ALL, _ENV)))


def tokenize(raw: str) -> list[str]:
    """Split arguments like a shell, without escapes: quotes group, whitespace separates.

    `a"b c"d` is one token `ab cd`; `""` is an empty token; an unclosed quote runs to the
    end of the string.
    """
    tokens: list[str] = []
    current: list[str] = []
    has_token = False
    quote: str | None = None
    for ch in raw:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                current.append(ch)
        elif ch in ('"', "'"):
            quote = ch
            has_token = True
        elif ch.isspace():
            if has_token:
                tokens.append("".join(current))
                current = []
                has_token = False
        else:
            current.append(ch)
            has_token = True
    if has_token:
        tokens.append("".join(current))
    return tokens


def join_arguments(values: Sequence[str]) -> str:
    """The inverse of `tokenize`: quote the values that need it (for CLI and MCP callers)."""
    parts: list[str] = []
    for value in values:
        if value and not any(ch.isspace() or ch in "\"'" for ch in value):
            parts.append(value)
        elif '"' not in value:
            parts.append(f'"{value}"')
        elif "'" not in value:
            parts.append(f"'{value}'")
        else:  # both quote kinds: close and reopen around each double quote
            parts.append('"' + value.replace('"', '"\'"\'"') + '"')
    return " ".join(parts)


def escape_tags(value: str) -> str:
    """Escape `<` and `>` only: an argument may mention `&` freely, but not open a tag."""
    return value.replace("<", "&lt;").replace(">", "&gt;")


def _pattern(names: Sequence[str]) -> re.Pattern[str]:
    if not names:
        return _BASE
    ordered = sorted(set(names), key=len, reverse=True)
    named = r"\$(?P<named>" + "|".join(re.escape(n) for n in ordered) + rf")(?![\[]|{_WORD})"
    return re.compile(named + "|" + _BASE.pattern)


def expand_body(
    content: str,
    raw_args: str,
    *,
    argument_names: Sequence[str] = (),
    skill_dir: str = "",
    session_id: str = "",
) -> str:
    """The body with placeholders filled (see the module docstring)."""
    raw = raw_args.strip()
    tokens = tokenize(raw)
    index_of: dict[str, int] = {}
    for position, name in enumerate(argument_names):
        index_of.setdefault(name, position)
    used_argument = False

    def token(position: int) -> str:
        return escape_tags(tokens[position]) if position < len(tokens) else ""

    def substitute(match: re.Match[str]) -> str:
        nonlocal used_argument
        groups = match.groupdict()
        if groups.get("env"):
            return skill_dir if groups["env"] in _DIR_NAMES else session_id
        used_argument = True
        if groups.get("named"):
            return token(index_of[groups["named"]])
        if groups.get("indexed"):
            return token(int(groups["indexed"]))
        if groups.get("positional"):
            return token(int(groups["positional"]))
        return escape_tags(raw)

    expanded = _pattern(argument_names).sub(substitute, content)
    if not used_argument and raw:
        expanded += "\n\nARGUMENTS: " + escape_tags(raw)
    return expanded
