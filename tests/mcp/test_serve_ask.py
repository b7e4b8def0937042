"""AskUserQuestion through `deftly serve`, driven by the official SDK client over a real stdio
pipe: the questions arrive as one elicitation form (a choice or multi-select field and an
"Other" text field per question), the answers come back as the tool's JSON, declining
dismisses, and a client that cannot elicit is never offered the tool.

Both protocol generations: `legacy` (an elicitation request back to the client in the
middle of the call) and `auto` (2026-07-28: the call parks and is retried with the answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest

from deftly.features.ask.result import UNSUPPORTED
from tests.mcp.test_serve import MODES, connect, text_of

TOOL = "AskUserQuestion"
DB = {
    "question": "Which DB?",
    "header": "Database",
    "options": [{"label": "Postgres", "description": "a server"}, {"label": "SQLite"}],
}
EXTRAS = {
    "question": "Which extras?",
    "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
    "multi_select": True,
}


class Person:
    """An elicitation callback answering each form with the next reply; keeps every form."""

    def __init__(self, *replies: mt.ElicitResult) -> None:
        self.replies = list(replies)
        self.forms: list[mt.ElicitRequestFormParams] = []

    async def __call__(self, ctx: Any, params: Any) -> mt.ElicitResult:
        assert isinstance(params, mt.ElicitRequestFormParams)
        self.forms.append(params)
        return self.replies.pop(0)


def accept(**content: Any) -> mt.ElicitResult:
    return mt.ElicitResult(action="accept", content=content)


def answers(result: mt.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    found: dict[str, Any] = json.loads(text_of(result))
    return found


@pytest.mark.parametrize("mode", MODES)
async def test_choices_several_choices_and_own_words_come_back_as_answers(
    workspace: Path, mode: str
) -> None:
    person = Person(
        accept(q1="Postgres", q2=["Auth", "Search"], q2_other="Audit log"),
        accept(q1="SQLite", q1_other="  DuckDB, in process "),
    )
    async with connect(
        workspace, "stdio", mode, permission="manual", elicitation_callback=person
    ) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert TOOL in listed
        tool = listed[TOOL]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        first = await client.call_tool(TOOL, {"questions": [DB, EXTRAS]})
        second = await client.call_tool(TOOL, {"questions": [DB]})
    assert answers(first) == {
        "answers": {"Which DB?": "Postgres", "Which extras?": "Auth, Search, Audit log"}
    }
    assert answers(second) == {"answers": {"Which DB?": "DuckDB, in process"}}
    assert len(person.forms) == 2  # one form per call; manual mode asked no approval
    form = person.forms[0]
    assert "Which DB?" in form.message and "Postgres: a server" in form.message
    properties = form.requested_schema["properties"]
    assert set(properties) == {"q1", "q1_other", "q2", "q2_other"}
    assert properties["q1"]["type"] == "string"
    assert [o["const"] for o in properties["q1"]["oneOf"]] == ["Postgres", "SQLite"]
    assert properties["q2"]["type"] == "array"
    assert [o["const"] for o in properties["q2"]["items"]["anyOf"]] == ["Auth", "Billing", "Search"]
    assert (
        "Other" in properties["q1_other"]["title"] and "Database" in properties["q1_other"]["title"]
    )
    assert properties["q2_other"]["type"] == "string"
    assert "required" not in form.requested_schema  # a question may be left blank


@pytest.mark.parametrize("mode", MODES)
async def test_declining_or_cancelling_the_form_dismisses_the_questions(
    workspace: Path, mode: str
) -> None:
    person = Person(mt.ElicitResult(action="decline"), mt.ElicitResult(action="cancel"))
    async with connect(
        workspace, "stdio", mode, permission="manual", elicitation_callback=person
    ) as client:
        declined = await client.call_tool(TOOL, {"questions": [DB]})
        cancelled = await client.call_tool(TOOL, {"questions": [DB]})
    for result in (declined, cancelled):
        found = answers(result)
        assert found["answers"] == {}
        assert "dismissed" in found["note"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_is_not_offered_the_tool(
    workspace: Path, mode: str
) -> None:
    async with connect(workspace, "stdio", mode, permission="manual") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        anyway = await client.call_tool(TOOL, {"questions": [DB]})
    assert TOOL not in listed
    assert "NotifyUser" in listed  # the rest of the list is there
    assert anyway.is_error
    assert text_of(anyway) == UNSUPPORTED


async def test_auto_mode_offers_it_to_no_client(workspace: Path) -> None:
    person = Person(accept(q1="Postgres"))
    async with connect(
        workspace, "stdio", "legacy", permission="auto", elicitation_callback=person
    ) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool(TOOL, {"questions": [DB]})
    assert TOOL not in listed
    assert refused.is_error and "auto mode" in text_of(refused)
    assert person.forms == []


def test_every_form_field_is_a_primitive_the_elicitation_schema_allows() -> None:
    from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition  # what the SDK checks with
    from pydantic import TypeAdapter

    from deftly.serve.questions import form_schema, read_answers
    from deftly.session.questions import Choice, Question, QuestionRequest

    request = QuestionRequest(
        "mcp_1",
        TOOL,
        (
            Question("Which DB?", (Choice("Postgres", "a server"), Choice("SQLite"))),
            Question("Which extras?", (Choice("Auth"), Choice("Search")), "Extras", True),
            Question("Anything else?", ()),
        ),
    )
    schema = form_schema(request)
    adapter = TypeAdapter[Any](PrimitiveSchemaDefinition)
    for field in schema["properties"].values():
        adapter.validate_python(field)  # raises for anything a client may reject
    assert "q3" not in schema["properties"] and "q3_other" in schema["properties"]
    assert read_answers(request, {"q2": "Auth", "q3_other": "no", "q1": ""}) == {
        "Which extras?": "Auth",
        "Anything else?": "no",
    }
