"""`deftly serve` consumes its agent's inbox: a prompt that arrives on its own (a cron job
firing) is handed to the client as an MCP log message, because the client's model, not
deftly, runs the turns of a served session.

The relay counts as the inbox's consumer for the server's whole life, so the tools that
fill the inbox (the cron tools) are listed. It waits for a message only once a client has
sent a request (before that there is nobody to tell), so until then producers hold their
work back, as they do while a turn runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from deftly.session.inbox import Inbox, InboxMessage

log = logging.getLogger(__name__)

INBOX_LOGGERS = {"cron_job": "deftly.cron"}
"""The logger name of an inbox message's log message, by the kind of its producer."""
OTHER_LOGGER = "deftly.inbox"
"""The logger name for a message whose producer is not in `INBOX_LOGGERS`."""

SendLog = Callable[[str, str], Awaitable[None]]
"""Sends one log message to the client: (logger, text)."""


def logger_for(message: InboxMessage) -> str:
    """The log message's logger name for `message`."""
    return INBOX_LOGGERS.get(message.kind, OTHER_LOGGER)


class InboxRelay:
    """Hands each inbox message to the client with `send`, once `connected` is set."""

    def __init__(self, inbox: Inbox, send: SendLog, connected: asyncio.Event) -> None:
        self._inbox = inbox
        self._send = send
        self._connected = connected
        self._detach: Callable[[], None] | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Consume the inbox from now on (call from the event loop's thread)."""
        if self._task is not None:
            return
        self._detach = self._inbox.attach()
        self._task = asyncio.get_running_loop().create_task(self._relay())

    async def aclose(self) -> None:
        """Stop consuming; a message not yet sent stays in the inbox."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._detach is not None:
            self._detach()
            self._detach = None

    async def _relay(self) -> None:
        while True:
            await self._connected.wait()
            message = await self._inbox.get()
            try:
                await self._send(logger_for(message), message.text)
            except Exception as exc:  # a relay that dies would leave the inbox consumed
                log.warning("could not hand an inbox message to the client: %s", exc)
