"""The JSON schema a model sees, generated from a tool's pydantic params model.

Draft-07, the *input* view (a field with a default is optional), `$ref`s inlined where the
model is not recursive, titles dropped (noise for a model), and every object closed with
`additionalProperties: false` so a misspelt argument is an error, not silently ignored.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pydantic import BaseModel

DRAFT_07 = "http://json-schema.org/draft-07/schema#"

JsonSchema = dict[str, Any]


@cache
def _input_schema_cached(model: type[BaseModel]) -> JsonSchema:
    raw = model.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
    definitions = raw.pop("$defs", {})
    schema = _inline_refs(raw, definitions, stack=())
    if isinstance(schema, dict):
        _strip_titles(schema)
        close_objects(schema)
        leftover = {name: d for name, d in definitions.items() if _mentions(schema, name)}
        if leftover:
            schema["definitions"] = leftover
            _retarget_refs(schema)
        schema = {"$schema": DRAFT_07, **schema}
    return schema  # type: ignore[no-any-return]


def input_json_schema(model: type[BaseModel]) -> JsonSchema:
    """A fresh copy of the model's input schema (callers may mutate it)."""
    return copy.deepcopy(_input_schema_cached(model))


def close_objects(node: Any) -> None:
    """Give every `type: object` node without `additionalProperties` a `false` one."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    close_objects(prop)
            else:
                close_objects(value)
    elif isinstance(node, list):
        for item in node:
            close_objects(item)


def _inline_refs(node: Any, definitions: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in stack or name not in definitions:
                return node  # recursive: leave the reference in place
            target = _inline_refs(copy.deepcopy(definitions[name]), definitions, (*stack, name))
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **siblings} if isinstance(target, dict) else target
        return {k: _inline_refs(v, definitions, stack) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, definitions, stack) for item in node]
    return node


def _strip_titles(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    _strip_titles(prop)
            else:
                _strip_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


def _mentions(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        if node.get("$ref") == f"#/$defs/{name}":
            return True
        return any(_mentions(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_mentions(v, name) for v in node)
    return False


def _retarget_refs(node: Any) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node["$ref"] = "#/definitions/" + ref.removeprefix("#/$defs/")
        for value in node.values():
            _retarget_refs(value)
    elif isinstance(node, list):
        for item in node:
            _retarget_refs(item)
