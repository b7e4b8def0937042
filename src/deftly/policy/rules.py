"""Permission rules: `Tool` or `Tool(pattern)`, and the matchers tools hand to the engine.

The tool part may be a glob (`mcp__github__*`, `*`). The pattern part is matched by the
call itself through `ToolExecution.matches_rule`: path patterns for file tools
(case-insensitive, anchored at the working directory, `*` stays within one path
component), command/query patterns for the rest (case-sensitive, `*` matches any characters,
`/` included, so `Bash(rm -rf *)` covers `rm -rf /abs/path`). A text pattern ending in `:*`
is the prefix form other agents use: `npm run test:*` is `npm run test` alone or followed by
a space and anything. A leading `!` negates a pattern.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from deftly.contract.errors import DeftlyError
from deftly.contract.records import frozen
from deftly.contract.tool import RuleMatch
from deftly.policy.paths import ResolvedPath, real_path

_SPECIAL = frozenset("\\*?[]{}()!+@|")
_NAME_MAGIC = frozenset("*?[]{}")
_PREFILTER_UNSAFE = frozenset("[]{}()|\\!+@")
PREFIX_SUFFIX = ":*"


def _wcglob() -> ModuleType:
    # wcmatch takes ~10 ms to import, and a session whose rules never match a glob (no
    # rules, or none that concerns its calls) never needs it: every use is cached.
    from wcmatch import glob

    return glob


def _wcfnmatch() -> ModuleType:
    from wcmatch import fnmatch

    return fnmatch


def _glob_flags(*, paths: bool = False) -> int:
    """Tool names: `**`, braces, extglobs, `/` separators. Paths add: case-insensitive,
    and `*` matches dot-files."""
    g = _wcglob()
    flags: int = g.GLOBSTAR | g.BRACE | g.EXTGLOB | g.FORCEUNIX
    return flags | g.IGNORECASE | g.DOTGLOB if paths else flags


class RuleSyntaxError(DeftlyError):
    """A permission rule that does not parse (`Bash(git status` without its parenthesis); the
    message says what is wrong."""

    pass


@frozen
class Rule:
    """A parsed rule. `args` is None for a name-only rule."""

    tool: str
    args: str | None = None

    @property
    def text(self) -> str:
        """The rule written back: `Tool` or `Tool(args)`."""
        return self.tool if self.args is None else f"{self.tool}({self.args})"

    def matches_tool(self, name: str) -> bool:
        """Whether the rule's tool part names `name`: exactly, or as a glob (`mcp__github__*`)."""
        return self.tool == name or _name_matches(self.tool, name)


@functools.lru_cache(maxsize=8192)
def _name_matches(pattern: str, name: str) -> bool:
    if pattern == "*":
        return True
    if not any(ch in _NAME_MAGIC for ch in pattern):
        return pattern == name
    return _globmatch(name, pattern, _glob_flags())


def parse_rule(text: str) -> Rule:
    """Parse `Tool` or `Tool(pattern)`; raise RuleSyntaxError with a reason."""
    pattern = text.strip() if isinstance(text, str) else ""
    if not pattern:
        raise RuleSyntaxError("a rule cannot be empty; write `Tool` or `Tool(pattern)`")
    if "(" not in pattern:
        if ")" in pattern:
            raise RuleSyntaxError(f'"{pattern}" has a ")" without a matching "("')
        _check_tool_part(pattern, pattern)
        return Rule(pattern)
    if not pattern.endswith(")"):
        raise RuleSyntaxError(f'"{pattern}" is missing its closing ")"')
    tool, _, rest = pattern.partition("(")
    tool = tool.strip()
    if not tool:
        raise RuleSyntaxError(f'"{pattern}" has no tool name before "("')
    _check_tool_part(tool, pattern)
    args = rest[:-1]
    return Rule(tool, args if args.strip() else None)


def _check_tool_part(tool: str, pattern: str) -> None:
    if any(ch.isspace() for ch in tool):
        first, _, rest = tool.partition(" ")
        raise RuleSyntaxError(
            f'"{pattern}" has a space in its tool name; tool names have none. To match the '
            f'arguments of a call, put them in parentheses: "{first}({rest.strip()})"'
        )


_ESCAPES = str.maketrans({ch: "\\" + ch for ch in _SPECIAL})


def escape_subject(subject: str) -> str:
    """Escape glob characters so a pattern matches exactly this subject."""
    return subject.translate(_ESCAPES)


def literal_rule(tool: str, subject: str | os.PathLike[str]) -> str:
    """The rule remembered when a person approves one exact call "for this session"."""
    return f"{tool}({escape_subject(os.fspath(subject))})"


def _negated(pattern: str) -> tuple[bool, str]:
    if pattern.startswith("!") and not pattern.startswith("!("):
        return True, pattern[1:]
    return False, pattern


_OPTIONAL_TRAILING_SLASHES = "[/]*?)$"


@functools.lru_cache(maxsize=4096)
def _compiled(patterns: tuple[str, ...], flags: int, exact_end: bool = False) -> re.Pattern[str]:
    """wcmatch's translation of globs (brace expansion included) into one regex, compiled
    once: translating costs far more than matching.

    wcmatch lets any glob match with trailing slashes added (a directory path). For a
    command that would let `rm *` cover `rm -rf /`, so `exact_end` takes that out.
    """
    include, _ = _wcglob().translate(list(patterns), flags=flags)
    if exact_end:
        include = [
            r[: -len(_OPTIONAL_TRAILING_SLASHES)] + ")$"
            if r.endswith(_OPTIONAL_TRAILING_SLASHES)
            else r
            for r in include
        ]
    return re.compile("|".join(f"(?:{regex})" for regex in include) or "(?!)")


def _globmatch(subject: str, pattern: str, flags: int) -> bool:
    """Tool-name matching (no trailing-slash leeway)."""
    return _compiled((pattern,), flags, True).fullmatch(subject) is not None


def prefix_form(pattern: str) -> str | None:
    """`npm run test` for the prefix form `npm run test:*` (an unescaped `:*` at the very
    end), else None."""
    if not pattern.endswith(PREFIX_SUFFIX) or len(pattern) == len(PREFIX_SUFFIX):
        return None
    body = pattern[: -len(PREFIX_SUFFIX)]
    backslashes = len(body) - len(body.rstrip("\\"))
    return body if backslashes % 2 == 0 else None


@functools.lru_cache(maxsize=4096)
def _text_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """A text pattern as one regex: `*` and `?` match `/` too, braces and extglobs expand,
    and nothing is added at the end (`ls` never matches `ls/`, `rm x` never `rm x/`)."""
    fn = _wcfnmatch()
    flags: int = fn.BRACE | fn.EXTMATCH | fn.DOTMATCH | fn.FORCEUNIX
    if ignore_case:
        flags |= fn.IGNORECASE
    prefix = prefix_form(pattern)
    patterns = [prefix, prefix + " *"] if prefix is not None else [pattern]
    include, _ = fn.translate(patterns, flags=flags)
    return re.compile("|".join(f"(?:{regex})" for regex in include) or "(?!)")


def text_matches(subject: str, pattern: str, *, ignore_case: bool = False) -> bool:
    """Whether a (non-negated) text pattern covers the whole subject."""
    return _text_regex(pattern, ignore_case).fullmatch(subject) is not None


def glob_matches(subject: str, pattern: str, *, ignore_case: bool = False) -> bool:
    """Command/query matching: case-sensitive by default, `*` matches any characters (`/`
    included), `prefix:*` is the prefix form, `!pattern` negates."""
    if not pattern:
        return True
    negate, positive = _negated(pattern)
    hit = text_matches(subject, positive, ignore_case=ignore_case)
    if not hit and (subject.startswith("./") or positive.startswith("./")):
        hit = text_matches(
            subject.removeprefix("./"), positive.removeprefix("./"), ignore_case=ignore_case
        )
    return hit != negate


def glob_rule_matcher(subject: str) -> Callable[[str], bool]:
    """A call's rule matcher for a text subject (a URL, a query): a rule's pattern covers it when it
    glob-matches, `*` crossing `/`."""
    return lambda pattern: glob_matches(subject, pattern)


def _path_variants(text: str, cwd: Path | None, home: Path | None) -> list[str]:
    variants = [text]
    if text.startswith("./"):
        variants.append(text[2:])
    expanded = text
    if home is not None and (text == "~" or text.startswith("~/")):
        expanded = str(home) + text[1:]
    if os.path.isabs(expanded):
        variants.append(_normal(expanded))
    elif cwd is not None:
        variants.append(_normal(os.path.join(cwd, expanded)))
    return list(dict.fromkeys(variants))


def _normal(text: str) -> str:
    text = os.path.normpath(text)
    return "/" + text.lstrip("/") if text.startswith("//") else text


@functools.lru_cache(maxsize=4096)
def _pattern_variants(text: str, cwd: Path | None, home: Path | None) -> tuple[str, ...]:
    """The subject variants, plus: `dir/**` also names `dir` itself, and an absolute
    pattern's literal directory part resolved through symlinks (a rule written for
    `/repo/vendor/**` covers the files `/repo/vendor` links to). Worked out once per
    pattern (the symlinks as they are when a rule is first used)."""
    variants = _path_variants(text, cwd, home)
    for variant in list(variants):
        if variant.endswith("/**") and len(variant) > 3:
            variants.append(variant[:-3])
        if os.path.isabs(variant):
            resolved = _resolve_literal_prefix(variant)
            if resolved is not None:
                variants.append(resolved)
    return tuple(dict.fromkeys(variants))


@functools.lru_cache(maxsize=4096)
def _path_pattern(
    positive: str, cwd: Path | None, home: Path | None
) -> tuple[re.Pattern[str], tuple[tuple[str, ...], ...] | None]:
    """One compiled regex for all the variants of a path pattern, and for each variant the
    literal pieces a path must all contain to have a chance of matching it (None when that
    cannot be told simply). The regexes of `**` globs are slow on long paths; most rules do
    not concern most calls, and substring tests say so in a fraction of the time."""
    variants = _pattern_variants(positive, cwd, home)
    regex = _compiled(variants, _glob_flags(paths=True))
    needles: list[tuple[str, ...]] = []
    for variant in variants:
        if not variant.isascii() or any(ch in _PREFILTER_UNSAFE for ch in variant):
            return regex, None
        chunks = tuple(c.strip("/").lower() for c in re.split(r"[*?]+", variant))
        needles.append(tuple(c for c in chunks if c))
    return regex, tuple(needles)


def _match_subjects(
    subjects: tuple[str, ...], pattern: str, cwd: Path | None, home: Path | None
) -> bool:
    if not pattern:
        return True
    negate, positive = _negated(pattern)
    regex, needles = _path_pattern(positive, cwd, home)
    hit = False
    for subject in subjects:
        if needles is not None:
            folded = subject.lower()
            if not any(all(c in folded for c in chunks) for chunks in needles):
                continue
        if regex.fullmatch(subject) is not None:
            hit = True
            break
    return hit != negate


def _resolve_literal_prefix(pattern: str) -> str | None:
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[1:]:
        if any(ch in _SPECIAL for ch in part):
            break
        literal.append(part)
    if not literal:
        return None
    prefix = "/" + "/".join(literal)
    try:
        real = str(real_path(Path(prefix)))
    except OSError:
        return None
    if real == prefix:
        return None
    return real + pattern[len(prefix) :]


def path_matches(
    subject: str | os.PathLike[str],
    pattern: str,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
) -> bool:
    """Path matching: case-insensitive, `**` globstar, relative patterns anchored at cwd.

    Unlike shell globs, `*` and `**` match names starting with a dot (as in .gitignore), so
    a rule for `secrets/**` covers `secrets/.token` too.
    """
    return _match_subjects(tuple(_path_variants(os.fspath(subject), cwd, home)), pattern, cwd, home)


def path_rule_matcher(
    path: str | os.PathLike[str], *, cwd: Path | None = None, home: Path | None = None
) -> Callable[[str], bool]:
    """A call's rule matcher for a path: a rule's path pattern covers it as given, relative to
    `cwd`, or from `~` (`home`), with path-glob semantics (`*` stays in one directory, `**`
    crosses them)."""
    subjects = tuple(_path_variants(os.fspath(path), cwd, home))
    return lambda pattern: _match_subjects(subjects, pattern, cwd, home)


def resolved_rule_matcher(
    resolved: ResolvedPath, *, cwd: Path | None = None, home: Path | None = None
) -> Callable[[str], RuleMatch]:
    """Match a rule against both the path as given and where it really leads.

    FULL when the pattern covers both, PARTIAL when it covers only one of them: a deny rule
    then still applies (a link to a denied file is denied), an allow rule does not (a link
    inside an allowed directory that leads elsewhere is not allowed).
    """
    subjects = tuple(
        tuple(_path_variants(text, cwd, home))
        for text in dict.fromkeys([str(resolved.real), str(resolved.lexical)])
    )
    return ResolvedMatcher(subjects, cwd, home)


@frozen
class ResolvedMatcher:
    """The rule matcher of one resolved path (see `resolved_rule_matcher`). A value: two
    calls on the same path have equal matchers, and its answers depend on nothing else,
    so a rule book may remember which of its rules covers it."""

    subjects: tuple[tuple[str, ...], ...]
    cwd: Path | None
    home: Path | None

    def __call__(self, pattern: str) -> RuleMatch:
        return _resolved_match(self.subjects, pattern, cwd=self.cwd, home=self.home)


@functools.lru_cache(maxsize=16384)
def _resolved_match(
    subjects: tuple[tuple[str, ...], ...], pattern: str, *, cwd: Path | None, home: Path | None
) -> RuleMatch:
    """How far `pattern` covers a resolved path's subjects (see `resolved_rule_matcher`).
    A pure function of its arguments (the pattern's own variants are worked out once), so
    it is remembered: agents read the same files again and again, under the same rules."""
    hits = [_match_subjects(variants, pattern, cwd, home) for variants in subjects]
    if all(hits):
        return RuleMatch.FULL
    return RuleMatch.PARTIAL if any(hits) else RuleMatch.NONE
