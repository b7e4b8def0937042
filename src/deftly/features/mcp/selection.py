"""Which MCP servers a caller needs: a one-shot `deftly call` starts only the server whose
tool it calls (none for a built-in tool), instead of every configured server.

A server is needed for a name when the name is one of its tools' `mcp__<server>__<tool>`
names (see `naming.qualify`; a name cut to 64 characters still starts with its server's
part, or with as much of it as fits).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from deftly.features.mcp.naming import MAX_TOOL_NAME, MCP_PREFIX, SEPARATOR, sanitize_part
from deftly.features.mcp.specs import ServerSpec

_HASH_TAIL = 9  # "_" and the 8-character hash that ends a name cut to 64 characters


def may_own(server: str, tool_name: str) -> bool:
    """Whether `tool_name` can be one of `server`'s tools."""
    prefix = f"{MCP_PREFIX}{sanitize_part(server)}{SEPARATOR}"
    if tool_name.startswith(prefix) and len(tool_name) > len(prefix):
        return True
    if len(tool_name) == MAX_TOOL_NAME and tool_name.startswith(MCP_PREFIX):
        kept = tool_name[: MAX_TOOL_NAME - _HASH_TAIL]
        return prefix.startswith(kept) or kept.startswith(prefix)
    return False


def servers_for(specs: Sequence[ServerSpec], tool_names: Collection[str]) -> list[ServerSpec]:
    """The servers (in configuration order) that may own one of `tool_names`."""
    return [s for s in specs if any(may_own(s.name, name) for name in tool_names)]
