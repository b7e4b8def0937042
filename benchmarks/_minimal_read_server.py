"""The floor for bench_mcp.py: the smallest SDK server that reads a file, nothing else."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as mt
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

READ = mt.Tool(
    name="read",
    description="Read a file.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)


async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> mt.ListToolsResult:
    return mt.ListToolsResult(tools=[READ])


async def call_tool(
    ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
) -> mt.CallToolResult:
    path = (params.arguments or {})["path"]
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=text)])


async def main() -> None:
    server = Server("minimal", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
