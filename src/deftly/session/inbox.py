"""An agent's inbox: prompts that arrive on their own, run when the agent is idle.

A cron job firing puts its prompt here; it is never pushed into a turn that is running.
Whoever drives the agent *consumes* the inbox: the interactive `deftly run` between the
lines a person types, `deftly run --watch`, `deftly serve` (which hands each prompt to its
client), `Agent.watch()` in the library. Producers deliver only while a consumer waits
(`idle`), so work that falls due during a turn is held back and coalesced by its producer,
and tools that fill the inbox (`ToolTraits(uses_inbox=True)`) are offered only while
something consumes it (`consumed`).

One inbox per agent, used from the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import field

from deftly.contract.records import frozen


@frozen
class InboxMessage:
    """One prompt for the agent: `text` is the user message its turn starts with;
    `origin` says where it came from (`{"kind": "cron_job", "job_id": ...}`)."""

    text: str
    origin: Mapping[str, object] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The producer's kind ("cron_job"), or "" when it did not say."""
        kind = self.origin.get("kind")
        return kind if isinstance(kind, str) else ""


class Inbox:
    """One agent's inbox (see the module docstring)."""

    def __init__(self) -> None:
        self._messages: deque[InboxMessage] = deque()
        self._consumers = 0
        self._waiting = 0
        self._arrived = asyncio.Event()

    # -- consumers -----------------------------------------------------------------------

    def attach(self) -> Callable[[], None]:
        """Say that something consumes this inbox (until the returned function is called)."""
        self._consumers += 1
        detached = False

        def detach() -> None:
            nonlocal detached
            if not detached:
                detached = True
                self._consumers -= 1

        return detach

    @property
    def consumed(self) -> bool:
        """Whether anything consumes the inbox (so filling it makes sense)."""
        return self._consumers > 0

    @property
    def idle(self) -> bool:
        """Whether a consumer is waiting for a message right now (the agent is idle)."""
        return self._waiting > 0

    async def get(self) -> InboxMessage:
        """The next message, waiting for one; the agent counts as idle while this waits."""
        self._waiting += 1
        try:
            while not self._messages:
                self._arrived.clear()
                await self._arrived.wait()
        finally:
            self._waiting -= 1
        return self._messages.popleft()

    def take(self) -> InboxMessage | None:
        """The next message if there is one, without waiting."""
        return self._messages.popleft() if self._messages else None

    # -- producers -----------------------------------------------------------------------

    def put(self, message: InboxMessage) -> None:
        """Queue `message`; a waiting consumer wakes."""
        self._messages.append(message)
        self._arrived.set()

    def __len__(self) -> int:
        return len(self._messages)
