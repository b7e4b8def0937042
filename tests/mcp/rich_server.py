"""A real MCP server written with the SDK's MCPServer, for the client-side features of mounting.

Run it as a script: `python rich_server.py [--legacy] [--http PORT] [--token TOKEN]`.
`--legacy` answers `server/discover` with "method not found", as 2025-era servers do, so
the client falls back to the initialize handshake (2025-11-25: list changes come as
notifications, roots/list_changed is heard).

Tools: roots (the client's roots, one per line), ask_name / ask_prefs (elicitation), grow (adds a
tool and says the list changed), stats (a titled tool with structured output), blob (SIZE
characters of text, for the speed check), parts (several text blocks and a resource link),
heard (how many roots/list_changed notifications arrived).
Resources: note://readme (text), note://logo (binary). Prompt: review (one argument).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Annotated, Any

import anyio
import mcp.types as mt
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, Field

server = MCPServer("rich", version="1.0")


async def _say_changed(ctx: Context, kind: str) -> None:
    """Both eras: the 2026 subscription stream and the 2025 notification."""
    if kind == "tools":
        await ctx.notify_tools_changed()
    elif kind == "prompts":
        await ctx.notify_prompts_changed()
    else:
        await ctx.notify_resources_changed()
    with contextlib.suppress(Exception):
        session = ctx.session
        if kind == "tools":
            await session.send_tool_list_changed()
        elif kind == "prompts":
            await session.send_prompt_list_changed()
        else:
            await session.send_resource_list_changed()


# Resolvers ask the client in the way of the protocol in use: a request mid-call
# (2025-11-25), or an input round of the call (2026-07-28).
def _roots() -> ListRoots:
    return ListRoots()


@server.tool(title="List the client's roots")
async def roots(found: Annotated[mt.ListRootsResult, Resolve(_roots)]) -> str:
    """The client's roots, one URI per line."""
    return "\n".join(str(r.uri) for r in found.roots) or "(no roots)"


class Name(BaseModel):
    name: str = Field(description="Your name")


class Prefs(BaseModel):
    colour: str = Field(json_schema_extra={"enum": ["red", "green", "blue"]})
    tabs: bool = Field(description="Indent with tabs?")
    width: int = Field(description="Line width")


def _name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def _prefs() -> Elicit[Prefs]:
    return Elicit("Your editor preferences", Prefs)


@server.tool()
async def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(_name)]) -> str:
    """Ask the user their name."""
    if answer.action == "accept":
        return f"hello {answer.data.name}"
    return f"no name ({answer.action})"


@server.tool()
async def ask_prefs(answer: Annotated[ElicitationResult[Prefs], Resolve(_prefs)]) -> str:
    """Ask for editor preferences (an enum, a boolean and an integer)."""
    if answer.action == "accept":
        data = answer.data
        return f"colour={data.colour!r} tabs={data.tabs!r} width={data.width!r}"
    return f"no prefs ({answer.action})"


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called `name` (and a resource and a prompt), then say the lists changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"A tool added at run time ({name}).")

    @server.resource(f"note://{name}", name=name)
    def extra() -> str:
        return f"resource {name}"

    @server.prompt(name=f"prompt_{name}")
    def extra_prompt() -> str:
        return f"prompt {name}"

    for kind in ("tools", "resources", "prompts"):
        await _say_changed(ctx, kind)
    return f"added {name}"


class Stats(BaseModel):
    count: int
    words: list[str]


@server.tool(title="Count the words")
def stats(text: str) -> Stats:
    """Count the words of `text`."""
    words = text.split()
    return Stats(count=len(words), words=words)


@server.tool(structured_output=False)
def blob(size: int) -> str:
    """`size` characters of text."""
    line = "0123456789abcdef" * 4 + "\n"
    whole, rest = divmod(size, len(line))
    return line * whole + "x" * rest


@server.tool(structured_output=False)
def parts() -> list[Any]:
    """Two text blocks and a resource link."""
    return [
        mt.TextContent(type="text", text="first"),
        mt.ResourceLink(type="resource_link", uri="note://readme", name="readme"),
        mt.TextContent(type="text", text="second"),
    ]


@server.resource("note://readme", name="readme", title="Read me", mime_type="text/plain")
def readme() -> str:
    return "the readme text"


@server.resource("note://logo", name="logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n"


@server.prompt(title="Review a file")
def review(path: str) -> str:
    """Ask for a review of `path`."""
    return f"Please review {path}."


HEARD = {"roots_changed": 0}


@server.tool()
def heard() -> str:
    """How many roots/list_changed notifications arrived (counted under --legacy)."""
    return str(HEARD["roots_changed"])


async def _run_legacy() -> None:
    """stdio, but `server/discover` is refused before the server sees it (a 2025-era server)."""
    async with stdio_server() as (read, write):
        inner_write, inner_read = anyio.create_memory_object_stream[Any](0)

        async def pump() -> None:
            async with inner_write:
                async for item in read:
                    message = getattr(item, "message", None)
                    if (
                        isinstance(message, mt.JSONRPCRequest)
                        and message.method == "server/discover"
                    ):
                        error = mt.JSONRPCError(
                            jsonrpc="2.0",
                            id=message.id,
                            error=mt.ErrorData(
                                code=mt.METHOD_NOT_FOUND, message="Method not found"
                            ),
                        )
                        await write.send(SessionMessage(error))
                        continue
                    if (
                        isinstance(message, mt.JSONRPCNotification)
                        and message.method == "notifications/roots/list_changed"
                    ):
                        HEARD["roots_changed"] += 1
                    await inner_write.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            low = server._lowlevel_server
            await low.run(inner_read, write, low.create_initialization_options())
            group.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--token")
    parser.add_argument("--legacy", action="store_true")
    args = parser.parse_args()
    if args.legacy:
        anyio.run(_run_legacy)
        return
    if args.http is None:
        server.run()
        return
    import uvicorn
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()
    if args.token:

        async def check(request: Any, call_next: Any) -> Any:
            if request.headers.get("authorization") != f"Bearer {args.token}":
                return PlainTextResponse("unauthorized", status_code=401)
            return await call_next(request)

        app.add_middleware(BaseHTTPMiddleware, dispatch=check)
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
