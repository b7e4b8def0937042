"""A tool of a mounted MCP server, as a deftly tool (`source="mcp"`).

Its schema is the server's, used as given and checked with `jsonschema` before the call is
sent. It declares no accesses (the executor runs it alone: deftly cannot know what it
touches), and its approval rule is its own name, so `mcp__github__*` style rules match it.
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt

from deftly.contract.display import GenericDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import SchemaTool, ToolContext, ToolExecution, ToolTraits
from deftly.features.mcp.connection import McpConnection, RemoteTool


def traits_from(annotations: mt.ToolAnnotations | None, *, trust: bool) -> ToolTraits:
    """Annotations are a server's claims; they only count when the user trusts them.

    MCP annotations speak only of read-only, destructive, idempotent and open-world; the
    traits the guards add (`writes_files`, `stops_tasks`, ...) stay False: deftly cannot
    see what a server's tool touches, so such a tool runs alone and is asked about under
    the normal permissions (in plan mode too, as a tool that is not read-only)."""
    if annotations is None or not trust:
        return ToolTraits()
    read_only = bool(annotations.read_only_hint)
    return ToolTraits(
        read_only=read_only,
        destructive=not read_only and annotations.destructive_hint is not False,
        idempotent=bool(annotations.idempotent_hint),
        open_world=annotations.open_world_hint is not False,
    )


class McpTool(SchemaTool):
    """One tool of a mounted MCP server, called through its connection: the server's schema checks
    the arguments, its annotations become traits only when trusted, and its content comes back as
    the result."""

    def __init__(
        self,
        name: str,
        remote: RemoteTool,
        connection: McpConnection,
        *,
        trust_hints: bool = False,
        max_text: int = 50_000,
    ) -> None:
        server = connection.name
        description = remote.description.strip() or (
            f'The tool "{remote.name}" of the MCP server "{server}" (it has no description).'
        )
        super().__init__(name, description, remote.input_schema)
        self.title = remote.title
        self.output_schema = remote.output_schema
        self.server = server
        self.remote_name = remote.name
        self.annotations = remote.annotations
        self.traits = traits_from(remote.annotations, trust=trust_hints)
        self._connection = connection
        self._max_text = max_text

    def resolve(self, args: dict[str, Any]) -> ToolExecution:
        async def run(ctx: ToolContext) -> ToolResult:
            return await self._connection.call(self.remote_name, args, ctx, max_text=self._max_text)

        return ToolExecution(
            approval_rule=self.name,
            description=f"{self.remote_name} (MCP server {self.server})",
            display=GenericDisplay(
                summary=f'Call "{self.remote_name}" on the MCP server "{self.server}"',
                detail=args or None,
            ),
            execute=run,
        )
