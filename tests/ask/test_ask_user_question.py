"""AskUserQuestion through a real runtime (case 51 of the reference): the uniqueness
checks at execute, what reaches the answerer, and how its answers, its silence and its
failures come back to the model. Background questions: tests/tasks/test_background_question.py."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from deftly import Runtime
from deftly.contract.identity import MAIN_AGENT
from deftly.features.ask.result import DISMISSED_NOTE, UNSUPPORTED
from deftly.session.questions import QuestionRequest, QuestionsUnsupported
from tests.ask.helpers import DB, EXTRAS, TOOL, Recorder, answers_of, ask, question

DISMISSED = json.dumps({"answers": {}, "note": DISMISSED_NOTE}, separators=(",", ":"))


async def asking(make_runtime: Any, recorder: Recorder, **kwargs: Any) -> Runtime:
    runtime: Runtime = await make_runtime(answerer=recorder, **kwargs)
    return runtime


async def test_the_answer_comes_back_as_compact_json_keyed_by_question_text(
    make_runtime: Any,
) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(DB), call_id="call_db")
    assert not called.is_error, called.result.text
    assert called.result.text == '{"answers":{"Which DB?":"Postgres"}}'
    [request] = recorder.requests
    assert (request.call_id, request.tool) == ("call_db", TOOL)
    assert request.identity is not None and request.identity.agent_id == MAIN_AGENT
    assert request.identity.session_id == runtime.session_id
    [asked] = request.questions
    assert asked.question == "Which DB?"
    assert [o.label for o in asked.options] == ["Postgres", "SQLite"]
    assert (asked.header, asked.multi_select) == ("", False)
    assert called.description == "Asking the user"
    assert called.display is not None and called.display.summary == "Which DB?"


async def test_two_identical_questions_are_refused_and_nobody_is_asked(
    make_runtime: Any,
) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(DB, DB))
    assert called.is_error
    text = called.result.text
    assert "unique" in text and '"Which DB?"' in text
    assert "call AskUserQuestion again" in text
    assert recorder.requests == []


async def test_a_label_repeated_within_a_question_is_refused_and_nobody_is_asked(
    make_runtime: Any,
) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(question("Which DB?", "Postgres", "Postgres")))
    assert called.is_error
    assert "unique" in called.result.text and '"Postgres"' in called.result.text
    assert recorder.requests == []


async def test_the_same_label_in_two_questions_is_fine(make_runtime: Any) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres", "Which cache?": "Postgres"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(DB, question("Which cache?", "Postgres", "Redis")))
    assert not called.is_error, called.result.text
    assert answers_of(called.result.text) == {
        "answers": {"Which DB?": "Postgres", "Which cache?": "Postgres"}
    }


@pytest.mark.parametrize("reply", [None, {}, {"Which DB?": "  "}], ids=["none", "empty", "blank"])
async def test_nothing_answered_is_a_dismissal_not_an_error(make_runtime: Any, reply: Any) -> None:
    runtime = await asking(make_runtime, Recorder(lambda request: reply))
    called = await runtime.call(TOOL, ask(DB))
    assert not called.is_error
    assert called.result.text == DISMISSED
    assert "Do not take the recommended option" in called.result.text
    assert "do not ask again" in called.result.text


async def test_an_answerer_that_fails_counts_as_a_dismissal_and_is_logged(
    make_runtime: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request: QuestionRequest) -> Any:
        raise RuntimeError("the dialog crashed")

    runtime = await asking(make_runtime, Recorder(broken))
    with caplog.at_level(logging.WARNING, logger="deftly.features.ask"):
        called = await runtime.call(TOOL, ask(DB))
    assert not called.is_error
    assert called.result.text == DISMISSED
    assert "the dialog crashed" in caplog.text


async def test_an_answerer_that_cannot_ask_tells_the_model_to_ask_in_its_reply(
    make_runtime: Any,
) -> None:
    def unable(request: QuestionRequest) -> Any:
        raise QuestionsUnsupported("no forms here")

    runtime = await asking(make_runtime, Recorder(unable))
    called = await runtime.call(TOOL, ask(DB))
    assert called.is_error
    assert called.result.text == UNSUPPORTED
    assert "Do not call AskUserQuestion again" in UNSUPPORTED
    assert "ask the user in your reply" in UNSUPPORTED


async def test_free_text_multi_select_lists_and_partial_answers(make_runtime: Any) -> None:
    replies: dict[str, Any] = {
        "Which DB?": "DuckDB, in process",  # not an offered label: the person's own words
        "Which extras?": ["Auth", "Search"],  # a host that hands back a list
        "Not asked?": "ignored",
    }
    runtime = await asking(make_runtime, Recorder(lambda request: replies))
    called = await runtime.call(TOOL, ask(DB, EXTRAS, question("Deploy where?", "EU", "US")))
    assert not called.is_error, called.result.text
    found = answers_of(called.result.text)
    assert found["answers"] == {"Which DB?": "DuckDB, in process", "Which extras?": "Auth, Search"}
    assert list(found["answers"]) == ["Which DB?", "Which extras?"]  # the questions' order
    assert '"Deploy where?"' in found["note"] and "did not answer" in found["note"]


async def test_an_option_named_other_is_dropped_before_asking(make_runtime: Any) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "MySQL"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(question("Which DB?", "Postgres", " other ", "SQLite")))
    assert not called.is_error, called.result.text
    [request] = recorder.requests
    assert [o.label for o in request.questions[0].options] == ["Postgres", "SQLite"]
    assert answers_of(called.result.text) == {"answers": {"Which DB?": "MySQL"}}


async def test_headers_descriptions_and_multi_select_reach_the_answerer(
    make_runtime: Any,
) -> None:
    recorder = Recorder(lambda request: {"Which extras?": "Auth"})
    runtime = await asking(make_runtime, recorder)
    extras = {**EXTRAS, "options": [{"label": "Auth", "description": "log in"}, {"label": "Pay"}]}
    called = await runtime.call(TOOL, ask(extras))
    assert not called.is_error
    [asked] = recorder.requests[0].questions
    assert (asked.header, asked.multi_select) == ("Extras", True)
    assert [(o.label, o.description) for o in asked.options] == [("Auth", "log in"), ("Pay", "")]


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        ask(),
        ask(DB, DB, DB, DB, DB),
        ask(question("Which DB?", "Postgres")),
        ask(question("Which DB?", "a", "b", "c", "d", "e")),
        ask(question("", "a", "b")),
        ask(question("Which DB?", "", "b")),
        ask({**DB, "background": True}),
        {**ask(DB), "background": "later"},
    ],
    ids=[
        "no-questions",
        "zero",
        "five",
        "one-option",
        "five-options",
        "blank-question",
        "blank-label",
        "unknown-field",
        "background",
    ],
)
async def test_the_schema_refuses_what_is_out_of_range(
    make_runtime: Any, arguments: dict[str, Any]
) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "Postgres"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, arguments)
    assert called.is_error
    assert recorder.requests == []


async def test_the_schema_and_description_the_model_sees(make_runtime: Any) -> None:
    runtime = await asking(make_runtime, Recorder())
    [tool] = [t for t in runtime.tools() if t.name == TOOL]
    schema = tool.parameters
    assert schema["required"] == ["questions"]
    assert schema["properties"]["background"]["default"] is False
    questions = schema["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (1, 4)
    item = questions["items"]
    assert item["required"] == ["question", "options"]
    assert item["additionalProperties"] is False
    assert (
        item["properties"]["options"]["minItems"],
        item["properties"]["options"]["maxItems"],
    ) == (
        2,
        4,
    )
    assert item["properties"]["multi_select"]["default"] is False
    assert item["properties"]["options"]["items"]["required"] == ["label"]
    assert '"Other"' in tool.description and "Do not add" in tool.description
    assert "(Recommended)" in tool.description
    assert "1 to 4 questions" in tool.description


async def test_a_sync_and_an_async_function_both_answer(make_runtime: Any) -> None:
    def sync(request: QuestionRequest) -> dict[str, str]:
        return {request.questions[0].question: "SQLite"}

    async def later(request: QuestionRequest) -> dict[str, str]:
        await asyncio.sleep(0)
        return {request.questions[0].question: "Postgres"}

    runtime = await make_runtime(answerer=sync)
    first = await runtime.call(TOOL, ask(DB))
    assert answers_of(first.result.text) == {"answers": {"Which DB?": "SQLite"}}
    runtime.answerer = later
    second = await runtime.call(TOOL, ask(DB))
    assert answers_of(second.result.text) == {"answers": {"Which DB?": "Postgres"}}


async def test_a_question_offering_only_other_is_refused(make_runtime: Any) -> None:
    recorder = Recorder(lambda request: {"Which DB?": "MySQL"})
    runtime = await asking(make_runtime, recorder)
    called = await runtime.call(TOOL, ask(question("Which DB?", "Other", "other ")))
    assert called.is_error
    assert "only" in called.result.text and "real options" in called.result.text
    assert recorder.requests == []
