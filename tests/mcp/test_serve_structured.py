"""`deftly serve` lists a title for every tool and the output schema a tool declares, and a
call's result carries `structuredContent` matching it (the real SDK client, over stdio and
streamable HTTP, both protocol eras). `CountTool` below is loaded by the served workspace's
config: a small tool with a shape of its own, so this side is tested apart from the
built-ins' schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import mcp.types as mt
import pytest
from pydantic import BaseModel, ConfigDict

from deftly import Accesses, Tool, ToolExecution, ToolResult, ToolTraits
from tests.conftest import trust_folder
from tests.mcp.test_serve import connect

COUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "words": {"type": "integer", "minimum": 0},
        "longest": {"type": "string"},
    },
    "required": ["words", "longest"],
    "additionalProperties": False,
}


class CountParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class CountTool(Tool[CountParams]):
    """Counts the words of its text; its result has a declared shape."""

    name = "CountWords"
    description = "Count the words of a text."
    params = CountParams
    traits = ToolTraits(read_only=True, idempotent=True)
    output_schema = COUNT_SCHEMA

    def resolve(self, args: CountParams) -> ToolExecution:
        words = args.text.split()
        shape = {"words": len(words), "longest": max(words, key=len, default="")}
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description="Counting words",
            execute=lambda ctx: ToolResult.ok(f"{len(words)} words", structured=shape),
        )


@pytest.fixture
def shaped_workspace(workspace: Path) -> Path:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    loads = '"tests.mcp.test_serve_structured:CountTool", "tests.helpers:EchoTool"'
    config.write_text(f"[tools]\nload = [{loads}]\n", encoding="utf-8")
    trust_folder(workspace)
    return workspace


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_titles_output_schema_and_structured_content(
    shaped_workspace: Path, transport: str, mode: str
) -> None:
    async with connect(shaped_workspace, transport, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        untitled = [name for name, tool in tools.items() if not tool.title]
        assert not untitled, f"tools without a title: {untitled}"
        assert tools["Read"].title and tools["Read"].title != "Read"  # a title for people
        assert tools["CountWords"].output_schema == COUNT_SCHEMA
        assert tools["Echo"].output_schema is None  # declares none, gets none

        result = await client.call_tool("CountWords", {"text": "a quick brown fox"})
        assert not result.is_error
        assert result.structured_content == {"words": 4, "longest": "quick"}
        jsonschema.validate(result.structured_content, tools["CountWords"].output_schema)
        assert isinstance(result.content[0], mt.TextContent)
        assert result.content[0].text == "4 words"  # the text stays for the model

        plain = await client.call_tool("Echo", {"text": "hi"})
        assert plain.structured_content is None
