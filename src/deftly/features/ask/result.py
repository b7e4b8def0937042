"""From what the answerer gave back to what the model reads.

The result is compact JSON, `{"answers": {question text: answer}}`: the chosen label,
several labels joined by ", ", or the person's own words (labels that were never offered
are fine: that is the "Other" answer). Nothing answered is not an error: the person chose
not to, and the model is told not to guess and not to ask again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from deftly.contract.result import ToolResult
from deftly.session.questions import Question

log = logging.getLogger(__name__)

DISMISSED_NOTE = (
    "The user dismissed the questions without answering. Do not take the recommended option "
    "as their choice and do not ask again: go on with what you know, or say in your reply "
    "what you still need from them."
)
UNSUPPORTED = (
    "Questions cannot be shown to the user here (the client cannot display them). Do not "
    "call AskUserQuestion again; ask the user in your reply instead."
)
WITHDRAWN = "The questions were withdrawn: the call was cancelled before the user answered."


def started(task_id: str, description: str) -> ToolResult:
    """A background question is with the person: the model carries on meanwhile."""
    return ToolResult.ok(
        f"task_id: {task_id}\n"
        f"description: {description}\n"
        "status: running\n"
        "The questions are with the user. Go on with other work: their answer is announced "
        "to you when they respond. TaskOutput with this task_id shows it (or that it is still "
        "open) without waiting; TaskStop withdraws the questions. Until the answer arrives, "
        "do not assume one."
    )


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dismissed() -> ToolResult:
    """The person answered nothing (or asking failed): not an error."""
    return ToolResult.ok(_json({"answers": {}, "note": DISMISSED_NOTE}))


def unsupported() -> ToolResult:
    """Nobody here can be asked: ask in the reply, and never call the tool again."""
    return ToolResult.error(UNSUPPORTED)


def withdrawn() -> ToolResult:
    """The call was cancelled while the person had the questions."""
    return ToolResult.error(WITHDRAWN)


def _answer_text(value: object) -> str:
    """One answer as text: a string as is, a list of labels joined by ", "."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Sequence):
        return ", ".join(t for t in (_answer_text(v) for v in value) if t)
    return "" if value is None else str(value).strip()


def answered(questions: Sequence[Question], answers: object) -> ToolResult:
    """The answers to `questions` as the model's result: in question order, blank ones
    left out; a note names the questions left unanswered when only some were."""
    if answers is None:
        return dismissed()
    if not isinstance(answers, Mapping):
        log.warning(
            "the answerer returned a %s instead of a mapping of answers; taken as dismissed",
            type(answers).__name__,
        )
        return dismissed()
    asked = {q.question for q in questions}
    unknown = [key for key in answers if key not in asked]
    if unknown:
        log.info("answers to questions that were not asked were left out: %r", unknown)
    given: dict[str, str] = {}
    for question in questions:
        text = _answer_text(answers.get(question.question))
        if text:
            given[question.question] = text
    if not given:
        return dismissed()
    missing = [q.question for q in questions if q.question not in given]
    if not missing:
        return ToolResult.ok(_json({"answers": given}))
    note = (
        "The user did not answer "
        + ", ".join(json.dumps(m, ensure_ascii=False) for m in missing)
        + ". Do not assume an answer for it; go on without it or ask in your reply."
    )
    return ToolResult.ok(_json({"answers": given, "note": note}))
