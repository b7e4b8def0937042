"""The checks JSON Schema cannot express: unique question texts across a call, unique option
labels within a question. Run again at execute time, since a schema validator never sees
them; a call that fails them never reaches the person.

Also where an option the model labelled "Other" is dropped: whoever shows a question adds
its own "Other" (the person types an answer), so a second one would only confuse.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from deftly.session.questions import OTHER_LABEL, Choice, Question

RETRY = (
    "Each question text must be unique in one call, and each option label unique within "
    "its question. Reword the repeated one and call AskUserQuestion again."
)


def duplicate_problem(questions: Sequence[Question]) -> str | None:
    """What is repeated (the first question text asked twice, or the first label offered
    twice in one question), in words for the model; None when everything is unique.

    Texts are compared exactly, as the model wrote them; the same label in two different
    questions is fine."""
    seen_questions: set[str] = set()
    for question in questions:
        if question.question in seen_questions:
            return (
                f"The questions are not unique: {json.dumps(question.question)} is asked "
                f"more than once. {RETRY}"
            )
        seen_questions.add(question.question)
        seen_labels: set[str] = set()
        for choice in question.options:
            if choice.label in seen_labels:
                return (
                    f"The options are not unique: {json.dumps(question.question)} offers "
                    f"{json.dumps(choice.label)} more than once. {RETRY}"
                )
            seen_labels.add(choice.label)
    return None


def is_other(choice: Choice) -> bool:
    """Whether an option is the model's own "Other" (any case, any surrounding space)."""
    return choice.label.strip().casefold() == OTHER_LABEL.casefold()


def only_other_problem(questions: Sequence[Question]) -> str | None:
    """Why a question cannot be asked once its "Other" options are dropped (it had no other
    option), or None."""
    for question in questions:
        if question.options and all(is_other(choice) for choice in question.options):
            return (
                f'{json.dumps(question.question)} offers only "Other", which every question '
                "gets anyway. Give it 2 to 4 real options and call AskUserQuestion again."
            )
    return None


def without_other(question: Question) -> Question:
    """The question without options labelled "Other": every question gets one anyway."""
    kept = tuple(choice for choice in question.options if not is_other(choice))
    if len(kept) == len(question.options):
        return question
    return Question(question.question, kept, question.header, question.multi_select)
