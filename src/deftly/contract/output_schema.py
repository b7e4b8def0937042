"""Output schemas of tools whose results have a shape, derived from one TypedDict each.

The TypedDict is the single source of truth: the tool builds its `ToolResult.structured`
as that TypedDict (a plain dict, so nothing is validated on the hot path, and mypy checks
the keys), and `OutputSchema(Shape)` derives the JSON schema (draft 2020-12, an object at
the top as MCP requires, every object closed, titles dropped) from it on first use, so
importing a tool costs nothing (pydantic takes ~10 ms per schema).

    class GlobOutput(TypedDict):
        paths: Annotated[list[str], Field(description="...")]

    class GlobTool(...):
        output_schema = OutputSchema(GlobOutput)
"""

from __future__ import annotations

import copy
from typing import Any, overload

from deftly.contract.schema import JsonSchema

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class OutputSchema:
    """A class attribute that is the JSON schema of `shape`, built once when first read."""

    def __init__(self, shape: Any) -> None:
        self.shape = shape
        self._schema: JsonSchema | None = None

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> JsonSchema: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> JsonSchema: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> JsonSchema:
        if self._schema is None:
            self._schema = output_json_schema(self.shape)
        return self._schema


def output_json_schema(shape: Any) -> JsonSchema:
    """The draft 2020-12 JSON schema of a TypedDict (or pydantic model) `shape`."""
    from pydantic import TypeAdapter  # pydantic's schema machinery only when asked

    raw = TypeAdapter(shape).json_schema(mode="serialization")
    schema = copy.deepcopy(raw)
    _tidy(schema)
    if schema.get("type") != "object":
        raise TypeError(f"an output schema must describe an object, not {schema.get('type')}")
    return {"$schema": DRAFT_2020_12, **schema}


def _tidy(node: Any) -> None:
    """Drop titles (noise) and close every object, so a stray key fails validation."""
    if isinstance(node, dict):
        title = node.get("title")
        if isinstance(title, str):
            del node["title"]
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for child in value.values():
                    _tidy(child)
            else:
                _tidy(value)
    elif isinstance(node, list):
        for item in node:
            _tidy(item)
