"""`[mcp]`: mounting external MCP servers and deferred tool disclosure.

The servers themselves are listed in `mcp.json` files, in the `{"mcpServers": {...}}` shape
other MCP clients use: `~/.config/deftly/mcp.json`, then `<workspace>/.deftly/mcp.json`, then
the files named here (and by `--mcp-config`), then the `servers` table here; a later entry
with the same server name replaces an earlier one.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from deftly.config.base import Section


class McpConfig(Section):
    """`[mcp]`: timeouts for MCP servers and their calls, deferred disclosure of their tools, and
    whether their read-only hints are believed."""

    startup_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds a server may take to start and list its tools (per server: "
        '"startup_timeout" in mcp.json).',
    )
    call_timeout: float = Field(
        300.0,
        gt=0,
        description="Seconds one tool call may take before it is abandoned (per server: "
        '"call_timeout").',
    )
    trust_read_only_hints: bool = Field(
        False,
        description="Treat a tool's readOnlyHint annotation as true, so the permission engine "
        "may approve it like a read-only built-in. Off by default: servers can lie.",
    )
    select_tools: bool = Field(
        False,
        description="Deferred disclosure: keep deferred tools out of the top-level tool list, "
        "announce them by name, and let the model load them with select_tools.",
    )
    defer_mcp_tools: bool = Field(
        True, description="With select_tools on, mounted MCP tools are deferred."
    )
    config_files: list[str] = Field(
        default_factory=list,
        description="More mcp.json files to read (relative paths: from the workspace).",
    )
    servers: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Servers declared inline, each shaped like an mcp.json `mcpServers` entry.",
    )
    approval_timeout: float = Field(
        600.0,
        gt=0,
        description="deftly serve: seconds to wait for an MCP client's user to answer an "
        "approval question before the call is rejected.",
    )
