"""MCP both ways: mount external MCP servers as tools (client), serve deftly's tools (server).

Client side: `McpManager` reads `mcp.json` files and mounts each server's tools as
`mcp__<server>__<tool>`. Server side: `ToolServer` exposes a runtime's tools through the
SDK's low-level server; `serve_stdio` / `serve_http` run it; `ElicitationApprover` asks the
client's user when a call needs approval.
"""

from deftly.mcp.approval import ElicitationApprover
from deftly.mcp.connection import McpConnection, RemoteTool
from deftly.mcp.manager import Collision, McpManager, MountedTool, ServerStatus
from deftly.mcp.naming import is_mcp_tool_name, qualify, sanitize_part, stable_hash8
from deftly.mcp.serve import serve_http, serve_stdio
from deftly.mcp.server import ToolServer
from deftly.mcp.specs import ServerSpec, load_specs
from deftly.mcp.tool import McpTool

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
