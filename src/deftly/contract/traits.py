"""What a tool is like, declared once on the tool: the guards and defaults decide by these.

Plan mode, the permission engine's defaults, the shell's task hints and the MCP server's
annotations read a tool's traits; none of them lists tool names.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolTraits:
    """What a tool is like, for permission defaults and MCP annotations."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
