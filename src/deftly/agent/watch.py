"""`Agent.watch()`: the agent consuming its own inbox, one turn per message.

Prompts that arrive on their own (a cron job firing) wait in the agent's inbox
(`deftly.session.inbox`). Watching attaches to the inbox, so the tools that fill it are
offered, and waits for a message only while no turn holds the agent: the inbox counts as
idle exactly then, so a producer never delivers in the middle of a turn, and a turn some
other task starts (`Agent.run`) takes the agent back from the waiting watcher until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from deftly.agent.events import AgentEvent
from deftly.session.inbox import Inbox, InboxMessage

if TYPE_CHECKING:
    from deftly.agent.agent import Agent, TurnResult


class TurnSignal:
    """Wakes whoever waits when the agent's next turn begins."""

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def fire(self) -> None:
        """A turn begins: wake every waiter."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Until the next `fire()`."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)


async def watch_inbox(
    agent: Agent,
    inbox: Inbox,
    prompt: str | None,
    on_event: Callable[[AgentEvent], None] | None,
) -> AsyncIterator[TurnResult]:
    """What `Agent.watch()` returns (see there)."""
    await agent.start()
    detach = inbox.attach()
    try:
        if prompt is not None:
            yield await agent.run(prompt, on_event=on_event)
        while True:
            message = await next_message(agent, inbox)
            yield await agent.run(message.text, origin=message.origin, on_event=on_event)
    finally:
        detach()


async def next_message(agent: Agent, inbox: Inbox) -> InboxMessage:
    """The next inbox message, waited for only while the agent is idle: when a turn begins
    during the wait, the wait stops (the inbox is no longer idle) until that turn ends."""
    while True:
        await agent.until_idle()
        arrived = asyncio.ensure_future(inbox.get())
        began = asyncio.ensure_future(agent.next_turn_begins())
        try:
            await asyncio.wait({arrived, began}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            began.cancel()
            message = _stop_waiting(arrived)
            if message is not None:  # it came as the watch was cancelled: keep it
                inbox.put(message)
            raise
        began.cancel()
        message = _stop_waiting(arrived)
        if message is not None:
            return message


def _stop_waiting(arrived: asyncio.Future[InboxMessage]) -> InboxMessage | None:
    """The message `arrived` got, or None after cancelling its wait (a cancelled `get()`
    leaves any message in the inbox)."""
    if arrived.cancel() or arrived.cancelled():
        return None
    return arrived.result()
