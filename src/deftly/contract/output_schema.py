"""Output schemas of tools whose results have a shape, derived from one TypedDict each.

The TypedDict is the single source of truth: the tool builds its `ToolResult.structured`
as that TypedDict (a plain dict, so nothing is validated on the hot path, and mypy checks
the keys), and `OutputSchema(Shape)` derives the JSON schema (draft 2020-12, an object at
the top as MCP requires, every object closed) from it on first use, by reading the type
hints here (microseconds; pydantic's schema machinery took 2-20 ms per shape, paid on a
server's first tools/list).

    class GlobOutput(TypedDict):
        paths: Annotated[list[str], Field(description="...")]

    class GlobTool(...):
        output_schema = OutputSchema(GlobOutput)
"""

from __future__ import annotations

import inspect
import types
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    overload,
)

from typing_extensions import get_type_hints, is_typeddict

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
    """The draft 2020-12 JSON schema of a TypedDict `shape`: an object at the top, nested
    TypedDicts in `$defs`, `Annotated[..., Field(description=...)]` as descriptions, the
    class docstrings as the objects' descriptions, every object closed."""
    if not is_typeddict(shape):
        raise TypeError(f"an output schema is made of a TypedDict, not {shape!r}")
    defs: dict[str, JsonSchema] = {}
    top = _object(shape, defs)
    schema: JsonSchema = {"$schema": DRAFT_2020_12, **top}
    if defs:
        schema["$defs"] = defs
    return schema


def _object(shape: Any, defs: dict[str, JsonSchema]) -> JsonSchema:
    hints = get_type_hints(shape, include_extras=True)
    # Read NotRequired off the hints: with postponed annotations `__required_keys__`
    # cannot see it (it holds every key).
    optional = {name for name, hint in hints.items() if _origin(hint) is NotRequired}
    node: JsonSchema = {"type": "object"}
    doc = inspect.getdoc(shape)
    if doc and not doc.startswith(shape.__name__ + "("):  # not the generated signature
        node["description"] = doc
    node["properties"] = {name: _schema(hint, defs) for name, hint in hints.items()}
    node["required"] = [name for name in hints if name not in optional]
    node["additionalProperties"] = False
    return node


def _origin(hint: Any) -> Any:
    """`get_origin`, typed loosely (its stubs overload it in ways mypy cannot compare)."""
    return get_origin(hint)


def _schema(hint: Any, defs: dict[str, JsonSchema]) -> JsonSchema:
    origin = _origin(hint)
    if origin is Annotated:
        base, *extras = get_args(hint)
        node = _schema(base, defs)
        for extra in extras:
            description = getattr(extra, "description", None)
            if isinstance(description, str):
                node = {**node, "description": description}
        return node
    if origin is NotRequired or origin is Required:
        return _schema(get_args(hint)[0], defs)
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin is Literal:
        values = list(get_args(hint))
        kinds = {_SCALARS[type(v)] for v in values}
        return {"enum": values, "type": kinds.pop()} if len(kinds) == 1 else {"enum": values}
    if origin is list:
        (item,) = get_args(hint)
        return {"type": "array", "items": _schema(item, defs)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema(arg, defs) for arg in get_args(hint)]}
    if is_typeddict(hint):
        name = hint.__name__
        if name not in defs:
            defs[name] = {}  # taken, for a shape that refers to itself
            defs[name] = _object(hint, defs)
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no JSON schema for {hint!r} in an output shape")


_SCALARS: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
