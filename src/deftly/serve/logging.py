"""Runtime notices as MCP log messages: one table of which notice goes to which logger at
which level, and the level filter `logging/setLevel` sets.

A notice kind not in the table is not sent (a UI detail, such as a tool list refresh).
Permission decisions are debug: a client sees them only after `logging/setLevel debug`.
"""

from __future__ import annotations

import mcp.types as mt

from deftly.contract.records import frozen
from deftly.execution.events import RuntimeNotice
from deftly.features.notify.notification import Notification

LEVELS: tuple[mt.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""The MCP log levels, lowest first (RFC 5424 order)."""
DEFAULT_LEVEL: mt.LoggingLevel = "info"
"""What a client that never sent `logging/setLevel` gets: everything but debug."""


@frozen
class Route:
    """Where one kind of notice goes: the MCP logger name and its level."""

    logger: str
    level: mt.LoggingLevel


NOTICE_ROUTES: dict[str, Route] = {
    "task_finished": Route("deftly.tasks", "info"),
    "notify": Route("deftly.notify", "notice"),
    "hook": Route("deftly.hooks", "warning"),
    "permission": Route("deftly.permissions", "debug"),
    "permission_mode": Route("deftly.permissions", "notice"),
    "mcp.server_failed": Route("deftly.mcp", "warning"),
    "mcp.server_connected": Route("deftly.mcp", "info"),
    "mcp.tool_name_collision": Route("deftly.mcp", "warning"),
}
"""Every runtime notice kind a client is told of (kinds from execution/events.py's
`RuntimeNotice` emitters: the task board, NotifyUser, external hooks, the permission gate,
the session's mode switch, the MCP manager)."""
LIST_CHANGING = frozenset({"permission_mode", "mcp.tool_name_collision"})
"""Notice kinds after which the tools on offer may differ (plan mode hides writers); the
mounted servers' own changes come through `McpManager.on_change`. Not "permission": one
comes with every call, and listing costs more than a small call."""
MCP_LOGGER = "deftly.mcp"
"""Where the serve side's own news of mounted servers goes (connected, failed)."""
NOTIFY_LEVELS: dict[str, mt.LoggingLevel] = {"low": "info", "normal": "notice", "high": "warning"}
"""The log level of a NotifyUser notification, by its urgency."""


def route_of(notice: RuntimeNotice) -> Route | None:
    """The logger and level of `notice`, or None when clients are not told of its kind."""
    route = NOTICE_ROUTES.get(notice.kind)
    if route is None and notice.kind.startswith("mcp."):
        route = Route(MCP_LOGGER, "info")  # a mount-side notice added later
    if route is not None and isinstance(notice.data, Notification):
        route = Route(route.logger, NOTIFY_LEVELS.get(notice.data.urgency, route.level))
    return route


def passes(level: mt.LoggingLevel, threshold: mt.LoggingLevel | None) -> bool:
    """Whether a message at `level` reaches a client that asked for `threshold` and above."""
    return LEVELS.index(level) >= LEVELS.index(threshold or DEFAULT_LEVEL)
