"""MCP both ways: mount external MCP servers as tools (client), serve deftly's tools (server).

Client side: `McpManager` reads `mcp.json` files and mounts each server's tools as
`mcp__<server>__<tool>`. Server side: `ToolServer` exposes a runtime's tools through the
SDK's low-level server; `serve_stdio` / `serve_http` run it; `ElicitationApprover` asks the
client's user when a call needs approval.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Collision": "deftly.mcp.manager",
    "ElicitationApprover": "deftly.mcp.approval",
    "McpConnection": "deftly.mcp.connection",
    "McpManager": "deftly.mcp.manager",
    "McpTool": "deftly.mcp.tool",
    "MountedTool": "deftly.mcp.manager",
    "RemoteTool": "deftly.mcp.connection",
    "ServerSpec": "deftly.mcp.specs",
    "ServerStatus": "deftly.mcp.manager",
    "ToolServer": "deftly.mcp.server",
    "is_mcp_tool_name": "deftly.mcp.naming",
    "load_specs": "deftly.mcp.specs",
    "qualify": "deftly.mcp.naming",
    "sanitize_part": "deftly.mcp.naming",
    "serve_http": "deftly.mcp.serve",
    "serve_stdio": "deftly.mcp.serve",
    "stable_hash8": "deftly.mcp.naming",
}


def __getattr__(name: str) -> Any:
    """Exports load on first use: the SDK takes most of a second to import, and a runtime
    without MCP servers never needs it."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deftly.mcp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "Collision",
    "ElicitationApprover",
    "McpConnection",
    "McpManager",
    "McpTool",
    "MountedTool",
    "RemoteTool",
    "ServerSpec",
    "ServerStatus",
    "ToolServer",
    "is_mcp_tool_name",
    "load_specs",
    "qualify",
    "sanitize_part",
    "serve_http",
    "serve_stdio",
    "stable_hash8",
]
