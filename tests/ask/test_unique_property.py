"""The uniqueness check, for any questions: a call with a repeated question text, or a label
repeated within one question, is refused; any other is accepted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.features.ask.validate import duplicate_problem
from deftly.session.questions import Choice, Question

texts = st.text(min_size=1, max_size=6, alphabet="abAB ?é")
labels = st.lists(texts, min_size=2, max_size=4)
questions = st.lists(st.tuples(texts, labels), min_size=1, max_size=4)


def build(drawn: list[tuple[str, list[str]]]) -> list[Question]:
    return [Question(text, tuple(Choice(label) for label in ls)) for text, ls in drawn]


def has_duplicate(drawn: list[tuple[str, list[str]]]) -> bool:
    texts_seen = [text for text, _ in drawn]
    if len(set(texts_seen)) != len(texts_seen):
        return True
    return any(len(set(ls)) != len(ls) for _, ls in drawn)


@settings(deadline=None, max_examples=400)
@given(questions)
def test_refused_exactly_when_something_repeats(drawn: list[tuple[str, list[str]]]) -> None:
    problem = duplicate_problem(build(drawn))
    if has_duplicate(drawn):
        assert problem is not None and "unique" in problem
    else:
        assert problem is None


@settings(deadline=None, max_examples=200)
@given(questions, st.data())
def test_repeating_any_question_or_label_is_refused(
    drawn: list[tuple[str, list[str]]], data: st.DataObject
) -> None:
    which = data.draw(st.integers(0, len(drawn) - 1))
    if data.draw(st.booleans()):
        repeated = [*drawn, drawn[which]]
    else:
        text, ls = drawn[which]
        again = data.draw(st.sampled_from(ls))
        repeated = [*drawn[:which], (text, [*ls, again]), *drawn[which + 1 :]]
    assert duplicate_problem(build(repeated)) is not None
