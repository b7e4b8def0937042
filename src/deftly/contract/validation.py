"""Argument validation, with errors a model can act on.

Two validators: pydantic for tools with a params model, and `jsonschema` for tools that
only have a JSON schema (MCP tools, host tools). Both produce short sentences, one per bad
field; `InvalidArguments` joins them into one line that names the tool.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    from jsonschema import exceptions as js_exceptions
    from jsonschema.protocols import Validator

# jsonschema (with its referencing and format machinery) is imported when the first
# schema-only tool validates its arguments, not by everything that imports the contract.

_MAX_SHOWN = 60
_2020_KEYS = frozenset({"prefixItems", "$dynamicAnchor", "$dynamicRef"})
_2019_KEYS = frozenset(
    {
        "dependentRequired",
        "dependentSchemas",
        "maxContains",
        "minContains",
        "unevaluatedItems",
        "unevaluatedProperties",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)


def describe_value(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short when long."""
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _location(loc: Sequence[Any]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _unknown_field(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    listing = f"; known fields: {', '.join(known)}" if known and not close else ""
    return f"unknown field '{name}'{hint}{listing}"


def pydantic_problems(error: ValidationError, known_fields: Iterable[str]) -> list[str]:
    """One sentence per pydantic error."""
    known = list(known_fields)
    problems: list[str] = []
    for item in error.errors(include_url=False):
        loc = _location(item["loc"])
        kind = item["type"]
        if kind == "missing":
            problems.append(f"'{loc}' is required")
        elif kind == "extra_forbidden":
            field = str(item["loc"][-1])
            prefix = _location(item["loc"][:-1])
            sentence = _unknown_field(field, known if not prefix else ())
            problems.append(f"{prefix}: {sentence}" if prefix else sentence)
        elif kind == "model_type" and not item["loc"]:
            problems.append(f"arguments must be a JSON object, got {describe_value(item['input'])}")
        else:
            message = item["msg"][0].lower() + item["msg"][1:]
            where = f"'{loc}': " if loc else ""
            problems.append(f"{where}{message} (got {describe_value(item['input'])})")
    return problems


def _dialect(schema: Mapping[str, Any]) -> type[Validator]:
    import jsonschema

    declared = schema.get("$schema")
    if isinstance(declared, str):
        if "2020-12" in declared:
            return jsonschema.Draft202012Validator
        if "2019-09" in declared:
            return jsonschema.Draft201909Validator
        return jsonschema.Draft7Validator
    keys = _all_keys(schema)
    if keys & _2020_KEYS:
        return jsonschema.Draft202012Validator
    if keys & _2019_KEYS:
        return jsonschema.Draft201909Validator
    return jsonschema.Draft7Validator


def _all_keys(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            found.update(k for k in current if isinstance(k, str))
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return found


class JsonSchemaValidator:
    """Validates raw arguments against a JSON schema, picking the draft the schema uses."""

    def __init__(self, schema: Mapping[str, Any]):
        self.schema = schema
        from jsonschema import exceptions as js_exceptions

        self._broken: str | None = None
        cls = _dialect(schema)
        try:
            cls.check_schema(dict(schema))
        except js_exceptions.SchemaError as exc:
            self._broken = f"the tool's own schema is invalid ({exc.message}); it cannot be called"
        self._validator = cls(schema, format_checker=cls.FORMAT_CHECKER)

    def problems(self, instance: Any) -> list[str]:
        """Why `instance` does not match the schema, as short sentences naming each bad field (empty
        when it matches)."""
        if self._broken:
            return [self._broken]
        errors = sorted(self._validator.iter_errors(instance), key=lambda e: list(e.path))
        problems: list[str] = []
        for err in errors:
            problems.extend(self._describe(err))
        return problems

    def _describe(self, err: js_exceptions.ValidationError) -> list[str]:
        loc = _location(list(err.absolute_path))
        where = f"'{loc}': " if loc else ""
        if err.validator == "required" and isinstance(err.instance, dict):
            wanted = err.validator_value if isinstance(err.validator_value, list) else []
            missing = [n for n in wanted if n not in err.instance]
            prefix = f"{loc}." if loc else ""
            return [f"'{prefix}{name}' is required" for name in missing]
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            schema = err.schema if isinstance(err.schema, dict) else {}
            known = list(schema.get("properties", {}))
            extras = [k for k in err.instance if k not in known]
            return [f"{where}{_unknown_field(name, known)}" for name in extras] or [
                f"{where}{err.message}"
            ]
        if err.validator == "type" and not loc:
            return [f"arguments must be a JSON object, got {describe_value(err.instance)}"]
        return [f"{where}{err.message}"]
