"""MCP, client side: mount external MCP servers' tools as `mcp__<server>__<tool>`.

`McpManager` reads `mcp.json` files and mounts each server's tools. (The server side,
`deftly serve`, is the `deftly.serve` package: a surface above the runtime.)
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Collision": "deftly.features.mcp.manager",
    "McpConnection": "deftly.features.mcp.connection",
    "McpManager": "deftly.features.mcp.manager",
    "McpTool": "deftly.features.mcp.tool",
    "MountedTool": "deftly.features.mcp.manager",
    "RemoteTool": "deftly.features.mcp.connection",
    "ServerSpec": "deftly.features.mcp.specs",
    "ServerStatus": "deftly.features.mcp.manager",
    "is_mcp_tool_name": "deftly.features.mcp.naming",
    "load_specs": "deftly.features.mcp.specs",
    "qualify": "deftly.features.mcp.naming",
    "sanitize_part": "deftly.features.mcp.naming",
    "stable_hash8": "deftly.features.mcp.naming",
}


def __getattr__(name: str) -> Any:
    """Exports load on first use: the SDK takes most of a second to import, and a runtime
    without MCP servers never needs it."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deftly.features.mcp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "Collision",
    "McpConnection",
    "McpManager",
    "McpTool",
    "MountedTool",
    "RemoteTool",
    "ServerSpec",
    "ServerStatus",
    "is_mcp_tool_name",
    "load_specs",
    "qualify",
    "sanitize_part",
    "stable_hash8",
]
