"""A mounted server's form elicitation, put to deftly's user as questions.

One question per property of the requested schema: an enum (or titled `oneOf`) offers its
values, a boolean offers Yes/No, a list of enum values is a multi-select, and a string or
number is a question whose typed ("Other") answer is the value. The answers come back as
strings (see `FormSpec`) and are turned into typed values and checked against the schema
here, so every answerer (terminal, library callback, an upstream MCP client) is treated
alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.session.questions import Answers, Choice, FormSpec, Question, QuestionRequest

YES, NO = "Yes", "No"
_TRUE = {"yes", "y", "true", "1", "on"}
_FALSE = {"no", "n", "false", "0", "off"}


@frozen
class _Field:
    key: str
    kind: str
    """"boolean", "integer", "number", "string", or "array" (a multi-select)."""
    values: tuple[tuple[str, Any], ...] = ()
    """(label, value) of each choice, when the field has choices."""


def _choices(spec: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(spec["enum"]) else None
        return tuple((str(labels[i]) if labels else str(v), v) for i, v in enumerate(spec["enum"]))
    for key in ("oneOf", "anyOf"):
        items = spec.get(key)
        if isinstance(items, list) and all(isinstance(i, dict) and "const" in i for i in items):
            return tuple((str(i.get("title") or i["const"]), i["const"]) for i in items)
    return ()


def _field(key: str, spec: Mapping[str, Any]) -> _Field:
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items")
        return _Field(key, "array", _choices(items) if isinstance(items, dict) else ())
    if kind == "boolean":
        return _Field(key, "boolean", ((YES, True), (NO, False)))
    if kind in ("integer", "number"):
        return _Field(key, str(kind), _choices(spec))
    return _Field(key, "string", _choices(spec))


def _fields(schema: Mapping[str, Any]) -> list[_Field]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    return [_field(k, v if isinstance(v, dict) else {}) for k, v in properties.items()]


def _question_text(key: str, spec: Mapping[str, Any], required: bool) -> str:
    label = str(spec.get("title") or key)
    about = spec.get("description")
    text = f"{label}: {about}" if about and about != label else label
    hints = []
    if spec.get("type") in ("integer", "number"):
        hints.append("a whole number" if spec.get("type") == "integer" else "a number")
    if "default" in spec:
        hints.append(f"default {spec['default']}")
    if not required:
        hints.append("optional")
    return f"{text} ({', '.join(hints)})" if hints else text


def form_request(
    message: str,
    schema: Mapping[str, Any],
    *,
    call_id: str,
    tool: str,
    identity: Identity | None,
) -> QuestionRequest:
    """The questions standing for `schema`'s form (see the module docstring)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    questions: list[Question] = []
    keys: list[str] = []
    for field in _fields(schema):
        spec = properties.get(field.key) or {}
        text = _question_text(field.key, spec, field.key in required)
        if not questions and message:  # the server's message leads the first question
            text = f"{message}\n{text}"
        options = tuple(Choice(label) for label, _ in field.values)
        questions.append(
            Question(text, options, header=field.key[:12], multi_select=field.kind == "array")
        )
        keys.append(field.key)
    return QuestionRequest(
        call_id,
        tool,
        tuple(questions),
        identity,
        form=FormSpec(message, dict(schema), tuple(keys)),
    )


class AnswerProblem(ValueError):
    """An answer that does not fit the form (the text says which and why)."""


def _scalar(field: _Field, text: str) -> Any:
    for label, value in field.values:
        if text == label or text == str(value):
            return value
    if field.kind == "boolean":
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise AnswerProblem(f'"{field.key}" needs yes or no, not "{text}"')
    if field.kind in ("integer", "number"):
        try:
            number = float(text.strip())
        except ValueError:
            raise AnswerProblem(f'"{field.key}" needs a number, not "{text}"') from None
        if field.kind == "integer":
            if not number.is_integer():
                raise AnswerProblem(f'"{field.key}" needs a whole number, not "{text}"')
            return int(number)
        return int(number) if number.is_integer() and "." not in text else number
    return text


def typed_answers(request: QuestionRequest, answers: Answers) -> dict[str, Any]:
    """The form's content from the answers (keyed by question text): typed, and valid
    against the schema; AnswerProblem when an answer does not fit."""
    form = request.form
    assert form is not None
    fields = {f.key: f for f in _fields(form.schema)}
    content: dict[str, Any] = {}
    for question, key in zip(request.questions, form.keys, strict=True):
        text = answers.get(question.question)
        if text is None or text == "":
            continue
        field = fields[key]
        if field.kind == "array":
            content[key] = [_scalar(field, part.strip()) for part in text.split(",") if part]
        else:
            content[key] = _scalar(field, text)
    try:
        jsonschema.validate(content, dict(form.schema))
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "the form"
        raise AnswerProblem(f"{where}: {exc.message}") from None
    return content
