"""Rule syntax and matching: paths, commands, symlinks, and the fast path never lying."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wcglob

from deftly.contract import RuleMatch
from deftly.policy import PathOp, Workspace, glob_matches, literal_rule, parse_rule
from deftly.policy.rules import (
    Rule,
    RuleSyntaxError,
    _glob_flags,
    _path_variants,
    _pattern_variants,
    path_matches,
    resolved_rule_matcher,
)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (" Bash ", Rule("Bash")),
        ("Bash()", Rule("Bash")),
        ("Bash(git status)", Rule("Bash", "git status")),
        ("Bash(echo (a))", Rule("Bash", "echo (a)")),
        ("mcp__github__*", Rule("mcp__github__*")),
        ("Read(/etc/**)", Rule("Read", "/etc/**")),
    ],
)
def test_parse_rule(text: str, rule: Rule) -> None:
    assert parse_rule(text) == rule


@pytest.mark.parametrize("text", ["", "   ", "Bash(", "(x)", "Bash)", "Bash rm", "Bash x(y)"])
def test_parse_rule_refuses_what_would_never_match(text: str) -> None:
    with pytest.raises(RuleSyntaxError):
        parse_rule(text)


def test_literal_rules_match_only_their_subject() -> None:
    rule = parse_rule(literal_rule("Bash", "printf * [x] {a,b} !(c) \\"))
    assert rule.args is not None
    assert glob_matches("printf * [x] {a,b} !(c) \\", rule.args)
    assert not glob_matches("printf hello [x] {a,b} !(c) \\", rule.args)


@pytest.mark.parametrize(
    ("subject", "pattern", "expected"),
    [
        ("git status", "git *", True),
        # `*` in a command pattern crosses `/` (issue 10: `rm -rf *` must cover these)
        ("git log src/foo", "git *", True),
        ("rm -rf /", "rm *", True),
        ("rm -rf x/", "rm -rf *", True),
        ("rm -rf /abs/path", "rm -rf *", True),
        # ...but nothing is added at the end: no trailing-slash leeway
        ("ls/", "ls", False),
        ("rm -rf x/", "rm -rf x", False),
        ("rm -rf x//", "rm -rf x", False),
        # the prefix form other agents use
        ("npm run test", "npm run test:*", True),
        ("npm run test -- -x", "npm run test:*", True),
        ("npm run testing", "npm run test:*", False),
        ("npm run", "npm run test:*", False),
        ("ls", "ls", True),
        ("npm test && rm -rf x", "npm test*", True),
        ("Git status", "git *", False),
        ("./run.sh", "run.sh", True),
        ("deploy", "!deploy", False),
        ("build", "!deploy", True),
    ],
)
def test_command_patterns(subject: str, pattern: str, expected: bool) -> None:
    assert glob_matches(subject, pattern) is expected


WS = Path("/workspace")
HOME = Path("/home/u")


@pytest.mark.parametrize(
    ("subject", "pattern", "expected"),
    [
        ("/workspace/src/a.ts", "src/**", True),
        ("/workspace/a.ts", "*.ts", True),
        ("/home/u/notes/a.txt", "~/notes/*", True),
        ("/workspace/lib/x.ts", "/workspace/src/../lib/*.ts", True),
        ("/workspace/a.ts", "/WORKSPACE/A.TS", True),
        ("/workspace/README.md", "!./src/**", True),
        ("/workspace/src/a.ts", "!./src/**", False),
        ("/etc/.hidden", "/etc/**", True),
        ("/secrets/.token", "/secrets/*", True),
        ("/etc", "/etc/**", True),
        ("//etc/passwd", "/etc/**", True),
        ("/etc/passwd", "//etc/*", True),
        ("/etcetera/x", "/etc/**", False),
        ("/workspace/src/deep/a.py", "src/*.py", False),
    ],
)
def test_path_patterns(subject: str, pattern: str, expected: bool) -> None:
    assert path_matches(subject, pattern, cwd=WS, home=HOME) is expected


def test_a_pattern_through_a_symlinked_directory_covers_its_target(tmp_path: Path) -> None:
    real = tmp_path / "vendor-real"
    real.mkdir()
    (tmp_path / "vendor").symlink_to(real)
    pattern = f"{tmp_path}/vendor/**"
    assert path_matches(real / "lib.py", pattern)
    assert not path_matches(tmp_path / "other" / "lib.py", pattern)


def test_resolved_matcher_is_partial_when_a_link_leads_elsewhere(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    secret = tmp_path / "private"
    secret.mkdir()
    (ws / "docs" / "link").symlink_to(secret)
    found = Workspace(ws).locate(f"{ws}/docs/link/x.txt", PathOp.READ)
    match = resolved_rule_matcher(found, cwd=ws)
    assert match(f"{ws}/docs/**") is RuleMatch.PARTIAL, "allowed dir, but it leads outside"
    assert match(f"{secret}/**") is RuleMatch.PARTIAL, "a deny on the target still applies"
    assert match("**/x.txt") is RuleMatch.FULL
    assert match("/nowhere/**") is RuleMatch.NONE
    plain = Workspace(ws).locate("docs/a.md", PathOp.READ)
    assert resolved_rule_matcher(plain, cwd=ws)("docs/*") is RuleMatch.FULL


# The matcher skips the regex when a path lacks a pattern's literal pieces. This checks
# that shortcut against wcmatch itself on random patterns and paths: it may only save time.

PIECES = ["src", "a.py", "SRC", ".env", "x", "lib", "ws", "deep", "Tmp"]
GLOBS = ["*", "**", "?", "*.py", "{a,b}", "[ab]", "!(x)", "."]


@settings(max_examples=400, deadline=None)
@given(
    pattern=st.lists(st.sampled_from(PIECES + GLOBS), min_size=1, max_size=5),
    subject=st.lists(st.sampled_from([*PIECES, "a", "b", "q.py"]), min_size=1, max_size=6),
    absolute=st.booleans(),
    negate=st.booleans(),
)
def test_the_fast_path_agrees_with_wcmatch(
    pattern: list[str], subject: list[str], absolute: bool, negate: bool
) -> None:
    text = ("/" if absolute else "") + "/".join(pattern)
    path = "/ws/" + "/".join(subject)
    cwd, home = Path("/ws"), Path("/home/u")
    expected = any(
        wcglob.globmatch(s, p, flags=_glob_flags(paths=True))
        for s in _path_variants(path, cwd, home)
        for p in _pattern_variants(text, cwd, home)
    )
    full = ("!" if negate else "") + text
    assert path_matches(path, full, cwd=cwd, home=home) is (expected != negate)


def test_the_real_path_never_keeps_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").symlink_to("../c")
    (tmp_path / "c").mkdir()
    found = Workspace(tmp_path).locate("a/b/../b/x", PathOp.WRITE)
    assert found.real == Path(os.path.realpath(tmp_path / "a/b/../b/x"))
