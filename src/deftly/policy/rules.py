"""Permission rules: `Tool` or `Tool(pattern)`, and the matchers tools hand to the engine.

The tool part may be a glob (`mcp__github__*`, `*`). The pattern part is matched by the
call itself through `ToolExecution.matches_rule`: path patterns for file tools
(case-insensitive, anchored at the working directory), command/query patterns for the rest
(case-sensitive, `*` does not cross `/`). A leading `!` negates a pattern.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wcmatch import glob as wcglob

from deftly.contract.errors import DeftlyError
from deftly.contract.tool import RuleMatch
from deftly.policy.paths import ResolvedPath, normal_path, real_path

_SPECIAL = frozenset("\\*?[]{}()!+@|")
_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.EXTGLOB | wcglob.FORCEUNIX
_PATH_FLAGS = _GLOB_FLAGS | wcglob.IGNORECASE
_PATH_MATCH_FLAGS = _PATH_FLAGS | wcglob.DOTGLOB
_NAME_MAGIC = frozenset("*?[]{}")


class RuleSyntaxError(DeftlyError):
    pass


@dataclass(frozen=True, slots=True)
class Rule:
    """A parsed rule. `args` is None for a name-only rule."""

    tool: str
    args: str | None = None

    @property
    def text(self) -> str:
        return self.tool if self.args is None else f"{self.tool}({self.args})"

    def matches_tool(self, name: str) -> bool:
        if self.tool == "*":
            return True
        if not any(ch in _NAME_MAGIC for ch in self.tool):
            return self.tool == name
        return bool(wcglob.globmatch(name, self.tool, flags=_GLOB_FLAGS))


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


def escape_subject(subject: str) -> str:
    """Escape glob characters so a pattern matches exactly this subject."""
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in subject)


def literal_rule(tool: str, subject: str | os.PathLike[str]) -> str:
    """The rule remembered when a person approves one exact call "for this session"."""
    return f"{tool}({escape_subject(os.fspath(subject))})"


def _negated(pattern: str) -> tuple[bool, str]:
    if pattern.startswith("!") and not pattern.startswith("!("):
        return True, pattern[1:]
    return False, pattern


def glob_matches(subject: str, pattern: str, *, ignore_case: bool = False) -> bool:
    """Command/query matching: case-sensitive by default, `*` does not cross `/`."""
    if not pattern:
        return True
    negate, positive = _negated(pattern)
    flags = _PATH_FLAGS if ignore_case else _GLOB_FLAGS
    hit = bool(wcglob.globmatch(subject, positive, flags=flags))
    if not hit and (subject.startswith("./") or positive.startswith("./")):
        hit = bool(
            wcglob.globmatch(subject.removeprefix("./"), positive.removeprefix("./"), flags=flags)
        )
    return hit != negate


def glob_rule_matcher(subject: str) -> Callable[[str], bool]:
    return lambda pattern: glob_matches(subject, pattern)


def _path_variants(text: str, cwd: Path | None, home: Path | None) -> list[str]:
    variants = [text]
    if text.startswith("./"):
        variants.append(text[2:])
    expanded = text
    if home is not None and (text == "~" or text.startswith("~/")):
        expanded = str(home) + text[1:]
    if os.path.isabs(expanded):
        variants.append(str(normal_path(expanded)))
    elif cwd is not None:
        variants.append(str(normal_path(os.path.join(cwd, expanded))))
    return list(dict.fromkeys(variants))


def _pattern_variants(text: str, cwd: Path | None, home: Path | None) -> list[str]:
    """The subject variants, plus: `dir/**` also names `dir` itself, and an absolute
    pattern's literal directory part resolved through symlinks (a rule written for
    `/repo/vendor/**` covers the files `/repo/vendor` links to)."""
    variants = _path_variants(text, cwd, home)
    for variant in list(variants):
        if variant.endswith("/**") and len(variant) > 3:
            variants.append(variant[:-3])
        if os.path.isabs(variant):
            resolved = _resolve_literal_prefix(variant)
            if resolved is not None:
                variants.append(resolved)
    return list(dict.fromkeys(variants))


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
    if not pattern:
        return True
    negate, positive = _negated(pattern)
    subjects = _path_variants(os.fspath(subject), cwd, home)
    patterns = _pattern_variants(positive, cwd, home)
    hit = any(wcglob.globmatch(s, p, flags=_PATH_MATCH_FLAGS) for s in subjects for p in patterns)
    return hit != negate


def path_rule_matcher(
    path: str | os.PathLike[str], *, cwd: Path | None = None, home: Path | None = None
) -> Callable[[str], bool]:
    return lambda pattern: path_matches(path, pattern, cwd=cwd, home=home)


def resolved_rule_matcher(
    resolved: ResolvedPath, *, cwd: Path | None = None, home: Path | None = None
) -> Callable[[str], RuleMatch]:
    """Match a rule against both the path as given and where it really leads.

    FULL when the pattern covers both, PARTIAL when it covers only one of them: a deny rule
    then still applies (a link to a denied file is denied), an allow rule does not (a link
    inside an allowed directory that leads elsewhere is not allowed).
    """
    subjects = list(dict.fromkeys([str(resolved.real), str(resolved.lexical)]))

    def match(pattern: str) -> RuleMatch:
        hits = [path_matches(s, pattern, cwd=cwd, home=home) for s in subjects]
        if all(hits):
            return RuleMatch.FULL
        return RuleMatch.PARTIAL if any(hits) else RuleMatch.NONE

    return match
