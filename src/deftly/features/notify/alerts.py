"""What a host's terminal does with a "notify" notice: the bell, a desktop notification,
and the word that its renderer shows the line (the line itself comes through the agent's
event stream, in order with the turn).

A bus listener (`runtime.subscribe(alerts)`), so it acts the moment the notice is
emitted and tells the `Notification` which channels took it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import IO

from deftly.contract.identity import MAIN_AGENT
from deftly.execution.events import Event, EventListener, RuntimeNotice
from deftly.features.notify.desktop import DesktopNotifier
from deftly.features.notify.notification import NOTICE_KIND, Notification

BELL = "\a"


class NotifyAlerts:
    """Alerts a person at this machine about each notification.

    `shown` names how the host's renderer shows the line (said for notices of `agent_id`,
    the agent whose events it renders); `bell` is where to ring the terminal bell (a
    terminal only); `desktop` sends desktop notifications. A `low` notification is shown
    only: no bell, no desktop notification.
    """

    def __init__(
        self,
        *,
        shown: str | None = None,
        bell: IO[str] | None = None,
        desktop: DesktopNotifier | None = None,
        agent_id: str = MAIN_AGENT,
    ) -> None:
        self.shown = shown
        self.bell = bell
        self.desktop = desktop
        self.agent_id = agent_id

    def __call__(self, event: Event) -> None:
        """React to a notification (other events are ignored)."""
        if not isinstance(event, RuntimeNotice) or event.kind != NOTICE_KIND:
            return
        note = event.data
        if not isinstance(note, Notification):
            return
        if self.shown and event.identity.agent_id == self.agent_id:
            note.delivered(self.shown)
        if not note.alerts:
            return
        if self.bell is not None:
            self.bell.write(BELL)
            self.bell.flush()
            note.delivered("the terminal bell")
        if self.desktop is not None and self.desktop.send(note):
            note.delivered("a desktop notification (notify-send)")

    async def aclose(self) -> None:
        """Reap the desktop notifications still running."""
        if self.desktop is not None:
            await self.desktop.aclose()

    @contextlib.asynccontextmanager
    async def attached(
        self, subscribe: Callable[[EventListener], Callable[[], None]]
    ) -> AsyncIterator[NotifyAlerts]:
        """Listen while the block runs (`subscribe` is `runtime.subscribe`), then close."""
        stop = subscribe(self)
        try:
            yield self
        finally:
            stop()
            await self.aclose()
