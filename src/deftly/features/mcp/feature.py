"""The MCP feature (client side): every configured server's tools, mounted once per session.

Session step: one `McpManager` for the session, mounting into the session's registry
(which every agent's registry layers over, so a child agent shares the connections: no
server is started twice); a long-lived host (`connect_in_background`) does not wait for
the servers. Roots offered to the servers are the session workspace's, read when asked.
An untrusted workspace's own `mcp.json` is not read; a caller
that said which tools it will call starts only their servers. Agent step: an unknown
`mcp__<server>__...` name is explained (the server failed, is disabled...), and the agent's
question desk answers a server's elicitation during that agent's calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from deftly.features.api import AgentContext, Feature, SessionContext
from deftly.features.mcp.manager import McpManager
from deftly.features.mcp.selection import servers_for
from deftly.features.mcp.specs import load_specs

_PACKAGE = Path(__file__).resolve().parents[2]
"""The installed deftly package (its built-in skills are among the directories)."""


def offered_roots(ctx: SessionContext) -> Sequence[Path]:
    """The roots mounted servers are offered: the workspace root and the additional
    directories, less deftly's own (the session's spill and task logs, built-in skills):
    those are there for deftly's tools, not the user's project."""
    own = (ctx.session_dir.resolve(), ctx.session_area.resolve(), _PACKAGE)
    root, *extra = ctx.workspace.roots
    kept = [d for d in extra if not any(d.resolve().is_relative_to(mine) for mine in own)]
    return [root, *kept]


class McpFeature(Feature):
    """Mounted MCP servers (their tools have no contributions: they arrive at start)."""

    name: ClassVar[str] = "mcp"

    async def start_session(self, ctx: SessionContext) -> None:
        mcp = ctx.config.mcp
        manager = McpManager(
            ctx.workspace_path,
            mcp,
            ctx.registry,
            events=ctx.events,
            diagnostics=ctx.diagnostics,
            max_text=ctx.config.output.max_chars,
            disclosure="deferred" if mcp.select_tools and mcp.defer_mcp_tools else "inline",
            roots=lambda: offered_roots(ctx),
        )
        ctx.services.provide(manager)
        ctx.on_close(manager.close)
        # An untrusted workspace's own mcp.json is not read: its commands would run now.
        specs, manager.invalid = load_specs(
            ctx.workspace_path, mcp, ctx.diagnostics, trusted_workspace=ctx.trusted
        )
        if ctx.options.only_tools is not None:
            specs = servers_for(specs, ctx.options.only_tools)
        await manager.start(specs, background=ctx.options.connect_in_background)

    async def start_agent(self, ctx: AgentContext) -> None:
        manager = ctx.services.find(McpManager)
        if manager is not None:
            ctx.add_missing(manager.describe_missing)
            ctx.closers.add_sync(manager.add_desk(ctx.agent_id, ctx.questions))


FEATURE = McpFeature()
