"""The question desk: who answers, from an object or a plain function (sync or async)."""

from __future__ import annotations

import pytest

from deftly.session.questions import (
    Answers,
    CallbackAnswerer,
    Choice,
    Question,
    QuestionDesk,
    QuestionRequest,
    QuestionsUnsupported,
    as_answerer,
)

REQUEST = QuestionRequest(
    "call_1",
    "AskUserQuestion",
    (Question("Which DB?", (Choice("Postgres"), Choice("SQLite"))),),
)


class Fixed:
    async def answer(self, request: QuestionRequest) -> Answers | None:
        return {request.questions[0].question: "SQLite"}


async def test_a_desk_without_an_answerer_refuses_to_ask() -> None:
    desk = QuestionDesk()
    assert not desk.available
    with pytest.raises(QuestionsUnsupported):
        await desk.ask(REQUEST)


async def test_an_object_answers_and_can_be_replaced_by_a_function() -> None:
    desk = QuestionDesk(Fixed())
    assert await desk.ask(REQUEST) == {"Which DB?": "SQLite"}
    desk.answerer = lambda request: {"Which DB?": "Postgres"}
    assert isinstance(desk.answerer, CallbackAnswerer)
    assert await desk.ask(REQUEST) == {"Which DB?": "Postgres"}
    desk.answerer = None
    assert not desk.available


async def test_an_async_function_is_awaited_and_none_means_dismissed() -> None:
    async def dismiss(request: QuestionRequest) -> Answers | None:
        return None

    assert await QuestionDesk(dismiss).ask(REQUEST) is None


def test_something_that_cannot_answer_is_refused_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match="answer"):
        as_answerer(42)  # type: ignore[arg-type]
