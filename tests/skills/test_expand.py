"""Filling a skill body with its arguments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.features.skills import expand_body, join_arguments, tokenize

FULL = (
    "raw=$ARGUMENTS zero=$0 one=$1 second=$ARGUMENTS[1] flag=$flag message=$message "
    "dir=${DEFTLY_SKILL_DIR} session=${DEFTLY_SESSION_ID}"
)


def test_every_placeholder() -> None:
    # reference case 9
    out = expand_body(
        FULL,
        '-m "fix login"',
        argument_names=["flag", "message"],
        skill_dir="/tmp/skills/commit",
        session_id="ses_1",
    )
    assert out == (
        'raw=-m "fix login" zero=-m one=fix login second=fix login flag=-m message=fix login '
        "dir=/tmp/skills/commit session=ses_1"
    )


def test_claude_code_spellings_work_too() -> None:
    out = expand_body(
        "${CLAUDE_SKILL_DIR}/run.sh ${CLAUDE_SESSION_ID}", "", skill_dir="/d", session_id="s"
    )
    assert out == "/d/run.sh s"


def test_arguments_line_when_no_placeholder() -> None:
    # reference case 10
    assert expand_body("Review this file.", "src/app.ts") == (
        "Review this file.\n\nARGUMENTS: src/app.ts"
    )
    out = expand_body(
        "Use ${DEFTLY_SKILL_DIR}/references/checklist.md.", "src/app.ts", skill_dir="/s/r"
    )
    assert out == "Use /s/r/references/checklist.md.\n\nARGUMENTS: src/app.ts"
    assert expand_body("No args.", "   ") == "No args."


def test_named_arguments_need_a_word_boundary_and_numeric_names_are_ignored() -> None:
    # reference case 11
    out = expand_body("Leave $targeted alone.", "x", argument_names=["target"])
    assert out == "Leave $targeted alone.\n\nARGUMENTS: x"
    assert expand_body("$target[0] $target.", "x", argument_names=["target"]) == "$target[0] x."
    assert expand_body("$0 $1", "a b", argument_names=[]) == "a b"


def test_values_are_tag_escaped_but_ampersands_kept() -> None:
    # reference case 12
    out = expand_body(
        "target=$target raw=$ARGUMENTS", "<src/app.ts> & notes", argument_names=["target"]
    )
    assert out == "target=&lt;src/app.ts&gt; raw=&lt;src/app.ts&gt; & notes"
    appended = expand_body("Body.", "<b>")
    assert appended == "Body.\n\nARGUMENTS: &lt;b&gt;"


def test_unknown_and_missing_placeholders() -> None:
    assert expand_body("unknown=$missing actual=$0 missing=$1", "hello") == (
        "unknown=$missing actual=hello missing="
    )
    assert expand_body("$ARGUMENTS[7]|$10|$1abc", "a b") == "||$1abc"
    assert expand_body("\\$0", "x") == "\\x"  # no escape syntax: the backslash stays


def test_values_are_never_expanded_again() -> None:
    # A value containing a placeholder is inserted as it is (one pass, no injection).
    out = expand_body("first=$0 all=$ARGUMENTS", "$1 ${DEFTLY_SKILL_DIR}", skill_dir="/secret")
    assert out == "first=$1 all=$1 ${DEFTLY_SKILL_DIR}"


def test_a_placeholder_that_expands_to_itself_still_counts_as_used() -> None:
    assert expand_body("$ARGUMENTS", "$ARGUMENTS") == "$ARGUMENTS"


def test_repeated_and_overlapping_names() -> None:
    out = expand_body("$a|$ab|$b", "1 2 3", argument_names=["a", "ab", "a", "b"])
    # "a" keeps its first position (0); "b" is the fourth name: there is no fourth value
    assert out == "1|2|"


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        ("", []),
        ("  a   b  ", ["a", "b"]),
        ('-m "fix login"', ["-m", "fix login"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ('a"b c"d', ["ab cd"]),
        ('"" x', ["", "x"]),
        ('"it\'s"', ["it's"]),
        ('"unclosed rest', ["unclosed rest"]),
        ("tab\tand\nnewline", ["tab", "and", "newline"]),
        ("non\u00a0breaking", ["non", "breaking"]),
    ],
)
def test_tokenize(raw: str, tokens: list[str]) -> None:
    assert tokenize(raw) == tokens


@settings(deadline=None, max_examples=300)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=12), max_size=6))
def test_join_arguments_round_trips(values: list[str]) -> None:
    assert tokenize(join_arguments(values)) == values
