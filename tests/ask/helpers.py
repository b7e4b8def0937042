"""A recording answerer and ready-made arguments for the AskUserQuestion tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from deftly.session.questions import Answers, QuestionRequest

TOOL = "AskUserQuestion"


def option(label: str, description: str = "") -> dict[str, str]:
    return {"label": label, "description": description} if description else {"label": label}


def question(text: str, *labels: str, multi: bool = False, header: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {"question": text, "options": [option(label) for label in labels]}
    if multi:
        found["multi_select"] = True
    if header:
        found["header"] = header
    return found


DB = question("Which DB?", "Postgres", "SQLite")
EXTRAS = question("Which extras?", "Auth", "Billing", "Search", multi=True, header="Extras")


def ask(*questions: dict[str, Any]) -> dict[str, Any]:
    """The arguments of one call."""
    return {"questions": list(questions)}


class Recorder:
    """An answerer that records every request and answers with `reply(request)`."""

    def __init__(self, reply: Callable[[QuestionRequest], Any] = lambda request: None) -> None:
        self.reply = reply
        self.requests: list[QuestionRequest] = []

    async def answer(self, request: QuestionRequest) -> Answers | None:
        self.requests.append(request)
        reply: Answers | None = self.reply(request)
        return reply


def answers_of(text: str) -> dict[str, Any]:
    """The JSON result of a call, parsed."""
    found: dict[str, Any] = json.loads(text)
    return found
