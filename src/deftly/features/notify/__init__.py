"""NotifyUser: a short message for the person, and what shows it (`NotifyAlerts` for a
terminal, `DesktopNotifier` for notify-send; `deftly serve` sends an MCP log message)."""

from __future__ import annotations

from deftly.features.notify.alerts import NotifyAlerts
from deftly.features.notify.desktop import DesktopNotifier
from deftly.features.notify.notification import NOTICE_KIND, Notification, Urgency
from deftly.features.notify.notify_user import NotifyUserTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [ToolContribution.of(NotifyUserTool)]

__all__ = [
    "CONTRIBUTIONS",
    "NOTICE_KIND",
    "DesktopNotifier",
    "Notification",
    "NotifyAlerts",
    "NotifyUserTool",
    "Urgency",
]
