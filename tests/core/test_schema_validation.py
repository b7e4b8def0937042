"""Schemas generated from params models, and the messages bad arguments get."""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import InvalidArguments, ToolContext, input_json_schema
from deftly.contract.describe import describe, placeholders, render_template
from deftly.contract.validation import JsonSchemaValidator
from deftly.registry import HostTool
from tests.helpers import EchoTool


def noop(args: dict[str, object], ctx: ToolContext) -> str:
    return "ok"


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    description: str = ""


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: str = Field("read", description="how")
    items: list[Item] = Field(default_factory=list)


def required_names(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        found.update(node.get("required", []))
        for value in node.values():
            found |= required_names(value)
    elif isinstance(node, list):
        for value in node:
            found |= required_names(value)
    return found


def test_input_view_keeps_defaulted_fields_optional_and_closes_every_object() -> None:
    schema = input_json_schema(Params)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert required_names(schema) == {"label"}
    assert schema["additionalProperties"] is False
    assert schema["properties"]["items"]["items"]["additionalProperties"] is False
    assert "$defs" not in schema and "title" not in schema
    validator = jsonschema.Draft7Validator(schema)
    assert validator.is_valid({})
    assert not validator.is_valid({"bogus": True})
    assert not validator.is_valid({"items": [{"label": "A", "bogus": True}]})
    assert validator.is_valid({"items": [{"label": "A"}]})


def test_schema_is_a_fresh_copy_each_time() -> None:
    first = input_json_schema(Params)
    first["properties"]["mode"]["description"] = "changed"
    assert input_json_schema(Params)["properties"]["mode"]["description"] == "how"


def test_pydantic_errors_name_the_tool_and_every_bad_field_in_one_line() -> None:
    tool = EchoTool()
    with pytest.raises(InvalidArguments) as caught:
        tool.parse_args({"txt": "x", "times": 9})
    message = caught.value.message
    assert message.startswith('Invalid arguments for tool "Echo": ')
    assert "'text' is required" in message
    assert "unknown field 'txt' (did you mean 'text'?)" in message
    assert "'times'" in message and "9" in message
    assert "\n" not in message


@pytest.mark.parametrize("raw", [[], None, "str", 5])
def test_non_object_arguments_are_refused(raw: object) -> None:
    with pytest.raises(InvalidArguments) as caught:
        EchoTool().parse_args(raw)
    assert "JSON object" in caught.value.message


SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "n": {"type": "integer", "minimum": 1, "maximum": 600},
        "items": {
            "type": "array",
            "maxItems": 2,
            "items": {
                "type": "object",
                "properties": {"label": {"type": "string"}},
                "required": ["label"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, ["'path' is required"]),
        ({"path": 1}, ["'path': 1 is not of type 'string'"]),
        ({"path": "a", "n": 0}, ["'n': 0 is less than the minimum of 1"]),
        ({"path": "a", "pth": 1}, ["unknown field 'pth' (did you mean 'path'?)"]),
        (
            {"path": "a", "items": [{}, {"label": "x", "extra": 1}, {"label": "y"}]},
            ["'items': ", "'items[0].label' is required", "'items[1]': unknown field 'extra'"],
        ),
        ([], ["arguments must be a JSON object"]),
    ],
)
def test_json_schema_validator_messages(args: object, expected: list[str]) -> None:
    problems = "; ".join(JsonSchemaValidator(SCHEMA).problems(args))
    for fragment in expected:
        assert fragment in problems


def test_validator_picks_the_draft_and_checks_formats() -> None:
    email = {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}
    assert JsonSchemaValidator(email).problems({"e": "not-an-email"})
    assert not JsonSchemaValidator({"type": "number", "format": "email"}).problems(42)
    modern = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "prefixItems": [{"type": "string"}],
    }
    assert JsonSchemaValidator(modern).problems([1])


def test_a_broken_schema_makes_the_tool_uncallable_with_a_reason() -> None:
    tool = HostTool(
        "bad", "bad", {"type": "object", "properties": {"a": {"type": "nonsense"}}}, noop
    )
    with pytest.raises(InvalidArguments) as caught:
        tool.parse_args({"a": 1})
    assert "schema is invalid" in caught.value.message


def test_schema_tool_revalidates_when_its_schema_object_changes() -> None:
    tool = HostTool(
        "t",
        "t",
        {"type": "object", "properties": {"value": {}}, "additionalProperties": False},
        noop,
    )
    with pytest.raises(InvalidArguments):
        tool.parse_args({"value": 1, "model": "fast"})
    tool._parameters = {
        "type": "object",
        "properties": {"value": {}, "model": {}},
        "additionalProperties": False,
    }
    assert tool.parse_args({"value": 1, "model": "fast"}) == {"value": 1, "model": "fast"}


def test_templates_render_from_values_and_refuse_missing_ones() -> None:
    assert render_template("up to ${MAX_LINES} lines", {"MAX_LINES": 2000}) == "up to 2000 lines"
    assert placeholders("${A} and ${B_2} but not $C") == {"A", "B_2"}
    with pytest.raises(KeyError, match="MISSING"):
        render_template("${MISSING}", {})


class Described:
    description = describe("described.md")

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def description_vars(self) -> dict[str, object]:
        return {"LIMIT": self.limit}


def test_describe_reads_the_markdown_beside_the_module_and_renders_per_instance() -> None:
    assert Described.description.startswith("Reads at most ${LIMIT}")
    assert Described(7).description.startswith("Reads at most 7 lines")
    assert Described(9).description.startswith("Reads at most 9 lines")
