"""A real MCP server written with the SDK's low-level API, for the mounting tests.

Run it as a script: `python fake_server.py [options]`. Options pick how it misbehaves:

    --hang-on-start        sleep forever before speaking MCP
    --exit-on-start        print to stderr and exit before speaking MCP
    --long-names           also list an over-long tool name and two names that collide
    --pid-file PATH        write this process's id to PATH
    --calls-file PATH      append the name of every tool called to PATH
    --http PORT            serve streamable HTTP on 127.0.0.1:PORT instead of stdio

Tools: echo, add (structured output), image, progress, crash (the process dies mid-call),
hang (never answers), fail (isError result), big (long text), pid.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from typing import Any

import anyio
import mcp.types as mt
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

PNG_1PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e0a3f1a40000000049454e44ae426082"
    )
).decode()

OBJECT = {"type": "object"}


def tool(
    name: str, description: str, schema: dict[str, Any] | None = None, **hints: Any
) -> mt.Tool:
    annotations = mt.ToolAnnotations(**hints) if hints else None
    return mt.Tool(
        name=name, description=description, input_schema=schema or OBJECT, annotations=annotations
    )


TOOLS = [
    tool(
        "echo",
        "Say the text back.",
        {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        read_only_hint=True,
    ),
    tool(
        "add",
        "Add two integers.",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    tool("image", "Return a one-pixel PNG."),
    tool("progress", "Report progress three times, then answer."),
    tool("crash", "The server process dies in the middle of this call."),
    tool("hang", "Never answers."),
    tool("fail", "Answers with an error result."),
    tool("big", "Return 120,000 characters.", destructive_hint=True),
    tool("pid", "Return the server's process id."),
]

LONG_NAMES = [
    tool("t" * 80, "A tool whose name is far too long for a model API."),
    tool("a b", "First of two names that sanitise to the same thing."),
    tool("a__b", "Second of two names that sanitise to the same thing."),
]


def text(value: str, *, error: bool = False) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=value)], is_error=error)


def build(args: argparse.Namespace) -> Server[Any]:
    listed = TOOLS + (LONG_NAMES if args.long_names else [])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult:
        name = params.name
        arguments = params.arguments or {}
        if args.calls_file:
            with open(args.calls_file, "a", encoding="utf-8") as handle:
                handle.write(name + "\n")
        if name == "echo":
            return text(str(arguments.get("text")))
        if name == "add":
            total = int(arguments["a"]) + int(arguments["b"])
            return mt.CallToolResult(content=[], structured_content={"sum": total})
        if name == "image":
            return mt.CallToolResult(
                content=[
                    mt.TextContent(type="text", text="a pixel:"),
                    mt.ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
                ]
            )
        if name == "progress":
            for step in range(1, 4):
                await ctx.session.report_progress(step, 3, f"step {step}")
                await anyio.sleep(0.05)
            return text("progressed")
        if name == "crash":
            print("fake server: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(7)
        if name == "hang":
            await anyio.sleep(3600)
        if name == "fail":
            return text("the fake tool failed on purpose", error=True)
        if name == "big":
            return text("x" * 120_000)
        if name == "pid":
            return text(str(os.getpid()))
        return text(f"called {name}")

    return Server("fake", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(args: argparse.Namespace) -> None:
    server = build(args)
    if args.http:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=args.http, log_level="warning")
        await uvicorn.Server(config).serve()
        return
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hang-on-start", action="store_true")
    parser.add_argument("--exit-on-start", action="store_true")
    parser.add_argument("--long-names", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--calls-file")
    parser.add_argument("--http", type=int, default=0)
    options = parser.parse_args()
    if options.pid_file:
        with open(options.pid_file, "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    if options.exit_on_start:
        print("fake server: refusing to start", file=sys.stderr, flush=True)
        sys.exit(3)
    if options.hang_on_start:
        time.sleep(3600)
    anyio.run(main, options)
