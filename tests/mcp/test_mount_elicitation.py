"""Elicitation: a mounted server's form question reaches deftly's user through the calling
agent's answerer, as one question per property, and the answers go back typed; a dismissal
is a decline; where nobody can answer, the server is refused and the result says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deftly import Runtime
from deftly.features.mcp.elicitation import AnswerProblem, form_request, typed_answers
from deftly.session.questions import Answers, QuestionRequest
from tests.mcp.conftest import ERAS, rich

PREFS = {"colour": "green", "tabs": "Yes", "width": "100"}


async def mount(workspace: Path, answerer: Any, *args: str) -> Runtime:
    runtime = Runtime(
        workspace,
        config={"mcp": {"servers": {"rich": rich(*args)}}},
        builtins=False,
        plugins=False,
        approve_asks=True,
        answerer=answerer,
    )
    await runtime.start()
    return runtime


def by_key(request: QuestionRequest, values: dict[str, str]) -> Answers:
    assert request.form is not None
    return {
        q.question: values[k] for q, k in zip(request.questions, request.form.keys, strict=True)
    }


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_form_is_asked_as_questions_and_answered_with_typed_values(
    workspace: Path, era: str
) -> None:
    asked: list[QuestionRequest] = []

    def answer(request: QuestionRequest) -> Answers:
        asked.append(request)
        return by_key(request, PREFS)

    rt = await mount(workspace, answer, *ERAS[era])
    try:
        result = await rt.call("mcp__rich__ask_prefs", {})
        assert (result.is_error, result.text) == (False, "colour='green' tabs=True width=100")
        (request,) = asked
        assert request.form is not None and request.form.keys == ("colour", "tabs", "width")
        assert request.form.message == "Your editor preferences"
        colour, tabs, width = request.questions
        assert [c.label for c in colour.options] == ["red", "green", "blue"]
        assert [c.label for c in tabs.options] == ["Yes", "No"]
        assert width.options == () and "whole number" in width.question
        assert colour.question.startswith("Your editor preferences")
    finally:
        await rt.close()


async def test_dismissed_questions_are_a_decline(workspace: Path) -> None:
    rt = await mount(workspace, lambda request: None)
    try:
        assert (await rt.call("mcp__rich__ask_name", {})).text == "no name (decline)"
    finally:
        await rt.close()


async def test_an_answer_that_does_not_fit_is_a_decline_with_a_note(workspace: Path) -> None:
    rt = await mount(workspace, lambda r: by_key(r, {**PREFS, "width": "wide"}))
    try:
        result = await rt.call("mcp__rich__ask_prefs", {})
        assert result.text == "no prefs (decline)"
        assert result.result.note is not None and '"width" needs a number' in result.result.note
    finally:
        await rt.close()


@pytest.mark.parametrize("era", list(ERAS))
async def test_nobody_to_answer_refuses_the_server_and_says_how_to_fix_it(
    workspace: Path, era: str
) -> None:
    rt = await mount(workspace, None, *ERAS[era])
    try:
        result = await rt.call("mcp__rich__ask_name", {})
        note = result.result.note or ""
        assert "asked a question nobody here could answer" in note
        assert "What is your name?" in note and "Runtime(answerer=...)" in note
        assert "could not ask its user" in result.text  # the server's own error, passed on
    finally:
        await rt.close()


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "ok": {"type": "boolean"},
        "pick": {"type": "string", "oneOf": [{"const": "a", "title": "Apple"}, {"const": "b"}]},
        "many": {"type": "array", "items": {"enum": ["p", "q", "r"]}},
        "s": {"type": "string"},
    },
    "required": ["n"],
}


def request_for(schema: dict[str, Any]) -> QuestionRequest:
    return form_request("m", schema, call_id="c", tool="t", identity=None)


@given(
    n=st.integers(-(10**9), 10**9),
    x=st.floats(allow_nan=False, allow_infinity=False, width=32),
    ok=st.booleans(),
    pick=st.sampled_from(["a", "b"]),
    many=st.lists(st.sampled_from(["p", "q", "r"]), unique=True, min_size=1),
    s=st.text(alphabet=st.characters(blacklist_characters=","), min_size=1),
)
def test_answers_round_trip_to_the_typed_values(
    n: int, x: float, ok: bool, pick: str, many: list[str], s: str
) -> None:
    request = request_for(SCHEMA)
    labels = {"a": "Apple", "b": "b"}
    text = {
        "n": str(n),
        "x": repr(x),
        "ok": "Yes" if ok else "No",
        "pick": labels[pick],
        "many": ", ".join(many),
        "s": s,
    }
    content = typed_answers(request, by_key(request, text))
    assert content == {"n": n, "x": x, "ok": ok, "pick": pick, "many": many, "s": s}
    assert type(content["n"]) is int and type(content["ok"]) is bool


def test_a_missing_required_answer_or_a_bad_number_is_a_problem() -> None:
    request = request_for(SCHEMA)
    with pytest.raises(AnswerProblem, match="'n' is a required property"):
        typed_answers(request, by_key(request, {k: "" for k in request.form.keys}))  # type: ignore[union-attr]
    with pytest.raises(AnswerProblem, match="whole number"):
        typed_answers(request, {request.questions[0].question: "1.5"})
