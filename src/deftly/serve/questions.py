"""Asking an MCP client's user the questions of AskUserQuestion: the `Answerer` that `deftly
serve` installs.

All the questions of one call go in one elicitation form (one round trip, one parked call
for 2026-07-28 clients). Each question is a field of its own: a single choice is a string
with one titled value per option, a multi-select an array of them (the two enum shapes the
MCP elicitation schema allows in its flat object of primitive fields), and each has a text
field beside it for the person's own answer ("Other"). Nothing is required: a question left
blank is unanswered. Declining or cancelling the form dismisses the questions; a client
that cannot show forms makes the tool say it cannot ask here.

A request that stands for a mounted MCP server's own elicitation form (`request.form`) is
passed to the client as that form, unchanged, and the typed answers come back as strings
keyed by question text (`true`/`false`, numbers as written) for the mount to retype.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from deftly.serve.approval import Asker
from deftly.session.questions import (
    OTHER_LABEL,
    Answers,
    FormSpec,
    Question,
    QuestionRequest,
    QuestionsUnsupported,
)

log = logging.getLogger(__name__)

OTHER_SUFFIX = "_other"


def field_key(index: int) -> str:
    """The form field of the `index`-th question (from 1): `q1`, `q2`..."""
    return f"q{index}"


def _titled(question: Question) -> list[dict[str, str]]:
    return [
        {"const": o.label, "title": f"{o.label} — {o.description}" if o.description else o.label}
        for o in question.options
    ]


def _name(question: Question, index: int) -> str:
    return question.header.strip() or f"Question {index}"


def question_fields(question: Question, index: int) -> dict[str, dict[str, Any]]:
    """The two fields of one question: its choices, and the person's own answer."""
    key = field_key(index)
    if question.multi_select:
        choice: dict[str, Any] = {
            "type": "array",
            "title": question.question,
            "description": "Pick any that apply.",
            "items": {"anyOf": _titled(question)},
        }
    else:
        choice = {
            "type": "string",
            "title": question.question,
            "description": "Pick one.",
            "oneOf": _titled(question),
        }
    own = {
        "type": "string",
        "title": f"{_name(question, index)}: {OTHER_LABEL} (your own answer)",
        "description": (
            "Your own answer, in addition to what you picked."
            if question.multi_select
            else "Your own answer, instead of picking one."
        ),
    }
    if not question.options:  # nothing to pick: only the person's own answer
        return {key + OTHER_SUFFIX: own}
    return {key: choice, key + OTHER_SUFFIX: own}


def form_schema(request: QuestionRequest) -> dict[str, Any]:
    """The elicitation form for every question of the call (no field is required)."""
    properties: dict[str, dict[str, Any]] = {}
    for index, question in enumerate(request.questions, 1):
        properties.update(question_fields(question, index))
    return {"type": "object", "properties": properties}


def form_message(request: QuestionRequest) -> str:
    """The text shown above the form: every question with its options spelled out, for
    clients that show titles poorly."""
    count = len(request.questions)
    parts = [f"deftly: the agent has {'a question' if count == 1 else f'{count} questions'}."]
    for index, question in enumerate(request.questions, 1):
        how = "pick any" if question.multi_select else "pick one"
        lines = [f"{index}. {question.question} ({how}, or give your own answer)"]
        lines += [
            f"   - {o.label}" + (f": {o.description}" if o.description else "")
            for o in question.options
        ]
        parts.append("\n".join(lines))
    parts.append("Leave a question blank to skip it; decline to answer none.")
    return "\n\n".join(parts)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_answers(request: QuestionRequest, content: dict[str, Any]) -> Answers:
    """The person's answers from the submitted form: for one choice, their own words win
    over the picked option; for several, their own words follow the picked ones."""
    answers: dict[str, str] = {}
    for index, question in enumerate(request.questions, 1):
        key = field_key(index)
        own = _text(content.get(key + OTHER_SUFFIX))
        picked = content.get(key)
        if question.multi_select:
            values = picked if isinstance(picked, list) else [picked]
            chosen = [t for t in (_text(v) for v in values) if t]
            if own:
                chosen.append(own)
            answer = ", ".join(chosen)
        else:
            answer = own or _text(picked)
        if answer:
            answers[question.question] = answer
    return answers


def as_text(value: object) -> str | None:
    """A typed form value as the answer string a form's owner reads back: booleans as
    true/false, numbers as written, several choices joined by commas; None when empty."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        parts = [t for t in (as_text(v) for v in value) if t]
        return ", ".join(parts) or None
    text = str(value).strip()
    return text or None


def form_answers(request: QuestionRequest, form: FormSpec, content: dict[str, Any]) -> Answers:
    """The answers to a passed-on form, keyed by question text (`form.keys[i]` is the
    property of `request.questions[i]`); fields left empty stay unanswered."""
    answers: dict[str, str] = {}
    for question, key in zip(request.questions, form.keys, strict=False):
        text = as_text(content.get(key))
        if text is not None:
            answers[question.question] = text
    return answers


class ElicitationAnswerer:
    """Puts a call's questions to the user of the MCP client that made it."""

    def __init__(self, *, timeout: float = 600.0) -> None:
        self.timeout = timeout
        self._find: Callable[[str], Asker | None] = lambda call_id: None

    def bind(self, find: Callable[[str], Asker | None]) -> None:
        """Where to find the MCP call a request belongs to (by deftly call id)."""
        self._find = find

    async def answer(self, request: QuestionRequest) -> Answers | None:
        """The answers from one form; None when the user declined, cancelled, or nobody
        answered in time. `QuestionsUnsupported` when the client cannot show a form."""
        asker = self._find(request.call_id)
        if asker is None:
            raise QuestionsUnsupported("the call did not come from an MCP client that can be asked")
        if not asker.can_elicit:
            raise QuestionsUnsupported("this MCP client does not support form elicitation")
        form = request.form
        if form is not None:  # a mounted server's own form: passed on as it is
            message, schema = form.message, dict(form.schema)
        else:
            message, schema = form_message(request), form_schema(request)
        reply = await asker.elicit(message, schema, self.timeout)
        if reply is None:
            log.info("no answer to %s's questions within %g s", request.tool, self.timeout)
            return None
        if reply.action != "accept":
            return None
        content = dict(reply.content or {})
        if form is not None:
            return form_answers(request, form, content)
        return read_answers(request, content)
