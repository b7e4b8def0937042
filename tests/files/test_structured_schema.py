"""Output schemas derived from TypedDicts: draft 2020-12 objects, optional keys left out
of `required`, descriptions kept, nested shapes in `$defs`, every object closed; and every
built-in tool that declares one publishes a valid one."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

import pytest
from jsonschema import Draft202012Validator
from pydantic import Field
from typing_extensions import TypedDict

from deftly.contract.output_schema import DRAFT_2020_12, OutputSchema, output_json_schema
from deftly.features import BUILTIN_FEATURES


class _Item(TypedDict):
    """One item."""

    name: Annotated[str, Field(description="Its name.")]
    size: int | None


class _Shape(TypedDict):
    kind: Literal["a", "b"]
    items: list[_Item]
    extra: NotRequired[Annotated[float, Field(description="Sometimes.")]]


def test_a_shape_becomes_a_closed_2020_12_object() -> None:
    schema = output_json_schema(_Shape)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == DRAFT_2020_12 and schema["type"] == "object"
    assert schema["required"] == ["kind", "items"]
    assert schema["properties"]["extra"] == {"type": "number", "description": "Sometimes."}
    assert schema["properties"]["kind"] == {"enum": ["a", "b"], "type": "string"}
    item = schema["$defs"]["_Item"]
    assert item["description"] == "One item." and item["additionalProperties"] is False
    validator = Draft202012Validator(schema)
    good = {"kind": "a", "items": [{"name": "x", "size": None}]}
    assert validator.is_valid(good) and validator.is_valid({**good, "extra": 1.5})
    assert not validator.is_valid({**good, "kind": "c"})
    assert not validator.is_valid({**good, "items": [{"name": "x", "size": None, "y": 1}]})
    assert not validator.is_valid({"kind": "a"})


def test_only_typeddicts_of_json_types_are_shapes() -> None:
    class Odd(TypedDict):
        when: bytes

    with pytest.raises(TypeError, match="TypedDict"):
        output_json_schema(dict)
    with pytest.raises(TypeError, match="no JSON schema"):
        output_json_schema(Odd)


def test_the_schema_is_built_once_on_first_read() -> None:
    class Holder:
        output_schema = OutputSchema(_Shape)

    first = Holder.output_schema
    assert Holder().output_schema is first and first["type"] == "object"


def test_every_declared_builtin_output_schema_is_valid() -> None:
    declared = {
        c.factory.name: c.factory.output_schema  # type: ignore[attr-defined]
        for f in BUILTIN_FEATURES
        for c in f.contributions
        if c.factory.output_schema is not None  # type: ignore[attr-defined]
    }
    assert {"Glob", "Grep", "Edit", "Write", "TaskList", "TaskOutput", "WaitFor"} <= set(declared)
    for name, schema in declared.items():
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", name
