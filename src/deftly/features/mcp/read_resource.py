"""ReadMcpResource: open a mounted server's resource (a resource link in a tool's result, or a
listed resource) through `McpManager.read_resource`.

The manager registers it while some connected server has resources (decided by state, not
by server names) and removes it when none has any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mcp.types as mt
from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.errors import DeftlyError
from deftly.contract.result import ContentPart, ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.mcp.content import TEXT_SEPARATOR, _block_part

if TYPE_CHECKING:
    from deftly.features.mcp.manager import McpManager

MAX_LISTED = 50


class ReadMcpResourceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    uri: str = Field(description="The resource's mcp://<server>/<...> URI, exactly as shown.")


class ReadMcpResourceTool(Tool[ReadMcpResourceParams]):
    """Reads one resource through its server: read-only (a read changes nothing), but open
    world (the server decides what the URI means)."""

    name = "ReadMcpResource"
    title = "Read an MCP resource"
    description = describe("read_resource.md")
    params = ReadMcpResourceParams
    traits = ToolTraits(read_only=True, idempotent=True, open_world=True)

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    def description_vars(self) -> dict[str, object]:
        """The resources mounted now (a few; the rest are counted)."""
        found = self.manager.resources()
        lines = [
            f"- {r.uri} ({r.title or r.name}{', ' + r.mime_type if r.mime_type else ''})"
            for r in found[:MAX_LISTED]
        ]
        if len(found) > MAX_LISTED:
            lines.append(f"- ... and {len(found) - MAX_LISTED} more")
        return {"RESOURCES": "\n".join(lines) or "(none listed)"}

    def resolve(self, args: ReadMcpResourceParams) -> ToolExecution:
        async def run(ctx: ToolContext) -> ToolResult:
            try:
                read = await self.manager.read_resource(args.uri)
            except DeftlyError as exc:
                return ToolResult.error(str(exc))
            return _as_result(read, args.uri)

        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description=f"Reading the MCP resource {args.uri}",
            execute=run,
        )


def _as_result(read: mt.ReadResourceResult, uri: str) -> ToolResult:
    """The contents as one text, or as parts when there is media."""
    where = f"the resource {uri}"
    parts: list[ContentPart] = []
    for contents in read.contents:
        block = mt.EmbeddedResource(type="resource", resource=contents)
        part = _block_part(block, where)
        if part is not None:
            parts.append(part)
    if not parts:
        return ToolResult.ok(f"The resource {uri} is empty.")
    from deftly.contract.result import TextPart

    if all(isinstance(p, TextPart) for p in parts):
        return ToolResult.ok(TEXT_SEPARATOR.join(p.text for p in parts if isinstance(p, TextPart)))
    return ToolResult.ok(parts)
