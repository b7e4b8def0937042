"""The notify feature: the NotifyUser tool. It keeps no state: a notification is a notice
on the session's event bus, shown by whoever listens (`NotifyAlerts`, `deftly serve`)."""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import Feature
from deftly.features.notify import CONTRIBUTIONS
from deftly.registry.contribution import ToolContribution


class NotifyFeature(Feature):
    """Notifications for the person."""

    name: ClassVar[str] = "notify"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS


FEATURE = NotifyFeature()
