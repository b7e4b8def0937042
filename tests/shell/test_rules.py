"""Permission rules against shell commands, one segment at a time."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import RuleMatch, Runtime
from deftly.features.shell.commands import SHELLS, SOURCE_COMMANDS, interpreter
from deftly.features.shell.rules import (
    CommandMatcher,
    harmless_assignment,
    literal_pattern,
    split_command,
)
from deftly.policy import escape_subject, literal_rule, parse_rule

FULL, PARTIAL, NONE = RuleMatch.FULL, RuleMatch.PARTIAL, RuleMatch.NONE


def m(command: str, pattern: str) -> RuleMatch:
    return CommandMatcher(command).one(pattern)


def together(command: str, *patterns: str) -> RuleMatch:
    return CommandMatcher(command).together(patterns)


def decide(command: str, allow: list[str], deny: list[str]) -> Literal["allow", "deny", "ask"]:
    """The documented semantics: a deny matches on any segment, an allow needs all."""
    matches = CommandMatcher(command).one
    for text in deny:
        rule = parse_rule(text)
        if rule.matches_tool("Bash") and (rule.args is None or matches(rule.args) != NONE):
            return "deny"
    for text in allow:
        rule = parse_rule(text)
        if rule.matches_tool("Bash") and (rule.args is None or matches(rule.args) == FULL):
            return "allow"
    return "ask"


def test_compound_command_against_allow_and_deny() -> None:
    command = "git status && rm -rf x"
    assert m(command, "git status") is PARTIAL  # not enough for the allow
    assert m(command, "rm *") is PARTIAL  # enough for the deny
    assert decide(command, allow=["Bash(git status)"], deny=["Bash(rm *)"]) == "deny"
    assert decide(command, allow=["Bash(git status)"], deny=[]) == "ask"
    assert decide("git status", allow=["Bash(git status)"], deny=["Bash(rm *)"]) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf x",
        "git status || rm -rf x",
        "git status | rm -rf x",
        "git status & rm -rf x",
        "git status\nrm -rf x",
        "git status $(rm -rf x)",
        "git status `rm -rf x`",
        'git status "$(rm -rf x)"',
        "git status <(rm -rf x)",
        "(git status; rm -rf x)",
        "{ git status; rm -rf x; }",
        "if git status; then rm -rf x; fi",
        "for f in a; do rm -rf x; done",
        "git status && bash -c 'rm -rf x'",
        "git status && eval 'rm -rf x'",
        "git status ${X:-$(rm -rf x)}",
        "cat <<EOF\n$(rm -rf x)\nEOF",
        "git status && sudo rm -rf x",
        "git status && FOO=1 rm -rf x",
        "git status && timeout 5 rm -rf x",
        "git status && nice -n 5 rm -rf x",
        "git status && env A=b rm -rf x",
        'git status && "rm" -rf x',
        "git status && find . -exec rm -rf {} \\;",
        "git status | xargs rm -rf",
        "[[ -d x ]] && rm -rf x",
        "echo $((1 + 2)); rm -rf x",
        "time rm -rf x",
    ],
)
def test_a_hidden_segment_is_caught_by_a_deny(command: str) -> None:
    assert m(command, "rm *") in (PARTIAL, FULL), split_command(command)
    assert m(command, "git status") is not FULL


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("git status", "git status"),
        ("git status  ", "git status"),
        ("FOO=1 git status", "git status"),
        ("NODE_ENV=test npm test", "npm test"),
        ("timeout 30 npm test", "npm test"),
        ("timeout -s KILL 30 npm test", "npm test"),
        ("nice -n 10 make", "make"),
        ("env CI=1 make", "make"),
        ("nohup make", "make"),
        ("time make", "make"),
        ("npm test 2>&1", "npm test"),
        ("npm test > /dev/null 2>&1", "npm test"),
        ("git log --oneline | head -5", "git log *|head *"),
        ("git status # and a comment", "git status"),
        ('git commit -m "fix the thing"', "git commit *"),
        ("git status && git diff", "git *"),
    ],
)
def test_allow_matches_when_every_segment_does(command: str, pattern: str) -> None:
    if "|" in pattern:
        left, right = pattern.split("|")
        assert m(command, left) is PARTIAL and m(command, right) is PARTIAL
    else:
        assert m(command, pattern) is FULL


@pytest.mark.parametrize(
    "command",
    [
        "PATH=/tmp/evil:$PATH git status",
        "LD_PRELOAD=/tmp/x.so git status",
        "GIT_SSH_COMMAND='rm -rf ~' git status",
        "env PATH=/tmp git status",
        "env -S 'rm -rf x' git status",
        "sudo git status",
        "PYTHONPATH=/tmp git status",
    ],
)
def test_wrappers_that_change_what_runs_are_kept_for_an_allow(command: str) -> None:
    assert m(command, "git status") is PARTIAL  # a deny on `git status` still applies


def test_redirections_that_write_files_stay_part_of_the_command() -> None:
    assert m("echo hi > /etc/passwd", "echo hi") is not FULL
    assert m("echo hi > notes.txt", "echo *") is FULL  # the pattern covers it as written


def test_unparseable_commands_are_never_approved_by_a_pattern() -> None:
    for command in ("echo $((1+2))", "[[ -f x ]] && echo yes", "echo 'unclosed", "a | | b"):
        split = split_command(command)
        assert not split.parsed
        assert m(command, "*") is not FULL
        assert m(command, "echo *") is not FULL
        # ...but the rule remembered for "approve for this session" still works:
        assert m(command, escape_subject(command)) is FULL


def test_session_approval_literal_rule_reapproves_the_exact_compound_command() -> None:
    command = "git status && npm test | tail -3 (x) [y] {z} *"
    rule = parse_rule(literal_rule("Bash", command))
    assert rule.tool == "Bash" and rule.args is not None
    assert literal_pattern(rule.args) == command
    assert m(command, rule.args) is FULL
    assert m(command + " && rm -rf x", rule.args) is not FULL
    assert m("git status", rule.args) is NONE


def test_quoted_operators_are_not_separators() -> None:
    split = split_command("echo 'a && rm -rf x' \"b; c\"")
    assert split.parsed and len(split.segments) == 1
    assert m("echo 'a && rm -rf x'", "echo *") is FULL


def test_quoted_heredoc_body_is_text_not_commands() -> None:
    command = "cat <<'EOF' > notes.txt\n$(rm -rf x)\nrm -rf y\nEOF"
    split = split_command(command)
    assert split.parsed
    assert [s.text for s in split.segments] == ["cat <<'EOF' > notes.txt"]
    assert m(command, "rm *") is NONE
    assert m(command, "cat *") is FULL


def test_harmless_assignments() -> None:
    assert harmless_assignment("CI=1") and harmless_assignment("NODE_ENV=test")
    for bad in ("PATH=/x", "LD_PRELOAD=x", "GIT_DIR=x", "PYTHONPATH=x", "NODE_OPTIONS=x"):
        assert not harmless_assignment(bad)
    assert not harmless_assignment("not an assignment")


def test_negated_and_empty_patterns() -> None:
    assert m("ls -la", "!git *") is FULL
    assert m("git status", "!git *") is NONE
    assert m("git status && ls", "!git *") is PARTIAL
    assert m("git status", "") is FULL


def test_long_commands_fall_back_to_the_scanner() -> None:
    command = "echo " + "a" * 30_000 + " && rm -rf x"
    assert not split_command(command).parsed
    assert m(command, "rm *") is PARTIAL


def test_separately_allowed_parts_are_covered_together() -> None:
    assert together("git status | head -5", "git status", "head *") is FULL
    assert together("git status && rm -rf x", "git status", "head *") is PARTIAL
    assert together("cd src && make test", "cd *", "make *") is FULL
    assert together("echo $(whoami) > f", "echo *") is PARTIAL  # whoami is not covered
    assert together("echo $(whoami) > f", "echo *", "whoami") is FULL
    # a command the parser could not read for certain is never covered part by part
    unclosed = "git status | head -5 $("
    assert together(unclosed, "git status", "head *") is PARTIAL


async def test_a_pipeline_of_separately_allowed_commands_runs_without_asking(
    make_runtime: Any,
) -> None:
    # Nobody can be asked (approve_asks=False, no approver): an ask would be refused.
    allow = ["Bash(echo *)", "Bash(tr *)"]
    rt: Runtime = await make_runtime(approve_asks=False, config={"permissions": {"allow": allow}})
    ran = await rt.call("Bash", {"command": "echo quiet | tr a-z A-Z"})
    assert not ran.is_error and ran.text.strip() == "QUIET"
    decision = await rt.explain("Bash", {"command": "echo quiet | tr a-z A-Z"})
    assert decision.verdict.value == "approve"
    assert "Bash(echo *)" in decision.reason and "Bash(tr *)" in decision.reason
    refused = await rt.call("Bash", {"command": "echo quiet | sed s/q/Q/"})
    assert refused.is_error and "QUIET" not in refused.text


async def test_an_ask_rule_on_one_part_still_asks(make_runtime: Any) -> None:
    config = {"permissions": {"allow": ["Bash(echo *)", "Bash(tr *)"], "ask": ["Bash(tr *)"]}}
    rt: Runtime = await make_runtime(approve_asks=False, config=config)
    decision = await rt.explain("Bash", {"command": "echo a | tr a b"})
    assert decision.verdict.value == "ask" and "Bash(tr *)" in decision.reason


async def test_session_approvals_of_each_part_cover_the_whole(make_runtime: Any) -> None:
    # no harmless commands: `git log` and `wc` would otherwise run unasked
    no_harmless = {"permissions": {"harmless_commands": []}}
    rt: Runtime = await make_runtime(approve_asks=False, config=no_harmless)
    rt.permissions.session.add(literal_rule("Bash", "git log -1"))
    rt.permissions.session.add(literal_rule("Bash", "wc -l"))
    decision = await rt.explain("Bash", {"command": "git log -1 | wc -l"})
    assert decision.verdict.value == "approve" and "together" in decision.reason
    decision = await rt.explain("Bash", {"command": "git log -1 | wc -c"})
    assert decision.verdict.value == "ask"


async def test_matches_rule_through_the_resolved_call(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    tool = rt.registry.get("Bash").tool  # type: ignore[union-attr]
    execution = tool.resolve(tool.parse_args({"command": "git status && rm -rf x"}))
    assert execution.matches_rule is not None
    assert execution.matches_rule("git status") is PARTIAL
    assert execution.matches_rule("rm *") is PARTIAL
    assert execution.matches_rule(parse_rule(execution.approval_rule).args) is FULL


# -- properties ----------------------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._", min_size=1, max_size=8)
SIMPLE = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
OPERATOR = st.sampled_from([" && ", " || ", "; ", " | ", " & ", "\n"])
RESERVED = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "case",
    "esac",
    "while",
    "until",
    "for",
    "in",
    "function",
    "select",
    "time",
    "!",
    "{",
    "}",
    "coproc",
}


def _plain(command: str) -> bool:
    """Not a reserved word, and not a command that runs code deftly cannot see (a shell,
    `.`/`source`, an interpreter): those are opaque, never parsed for certain (issue 10)."""
    head = command.split(maxsplit=1)[0]
    return head not in RESERVED and not _runs_hidden_code(head)


def _runs_hidden_code(head: str) -> bool:
    return (
        head in SHELLS
        or head in SOURCE_COMMANDS
        or interpreter(head) is not None
        or (
            head == "trap"  # `trap CMD SIGNAL` holds a command of its own: a second segment
        )
    )


@settings(deadline=None, max_examples=150)
@given(st.lists(SIMPLE.filter(_plain), min_size=1, max_size=5), st.data())
def test_joined_simple_commands_split_back_into_themselves(
    commands: list[str], data: st.DataObject
) -> None:
    ops = [data.draw(OPERATOR) for _ in commands[1:]]
    line = commands[0] + "".join(op + cmd for op, cmd in zip(ops, commands[1:], strict=True))
    split = split_command(line)
    assert split.parsed
    assert [s.text for s in split.segments] == commands
    # an allow covering exactly one segment's text covers the line only if all are equal
    for cmd in commands:
        expected = FULL if all(c == cmd for c in commands) else PARTIAL
        assert m(line, cmd) is expected
    # all the segments' texts together cover it; leaving one distinct text out does not
    assert together(line, *commands) is FULL
    distinct = sorted(set(commands))
    for left_out in distinct:
        rest = [c for c in distinct if c != left_out]
        assert together(line, *rest) is (PARTIAL if rest else NONE)


@settings(deadline=None, max_examples=150)
@given(
    st.lists(SIMPLE.filter(_plain), min_size=1, max_size=4),
    st.sampled_from(["$(X)", "`X`", "<(X)", "; X", "&& X", "| X"]),
    st.data(),
)
def test_a_denied_command_anywhere_is_found(
    commands: list[str], shape: str, data: st.DataObject
) -> None:
    where = data.draw(st.integers(0, len(commands) - 1))
    first = commands[0]
    commands[where] = commands[where] + " " + shape.replace("X", "rm -rf target")
    line = " && ".join(commands)
    assert m(line, "rm -rf *") is not NONE
    assert m(line, first) is not FULL  # the hidden command is not covered by that allow
