"""`[mcp]`: mounting external MCP servers and deferred tool disclosure."""

from __future__ import annotations

from deftly.config.base import Section


class McpConfig(Section):
    pass
