"""One turn with Ctrl-C wired to it, shared by print mode and the interactive session:
the first SIGINT cancels the turn as the user (running tools are stopped within the
executor's grace period and the stream ends with `TurnEnded("cancelled")`), a second one
abandons it at once. A slash command's own model request (/compact) is `interruptible`."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from deftly.agent.events import AgentEvent, TurnEnded

if TYPE_CHECKING:
    from deftly.agent import Agent

T = TypeVar("T")


async def interruptible(work: Coroutine[Any, Any, T]) -> tuple[bool, T | None]:
    """Await `work` (a slash command's model request, such as /compact) with Ctrl-C
    cancelling it: `(True, result)`, or `(False, None)` when it was interrupted."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    try:
        return True, await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise
        return False, None
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def run_turn(
    agent: Agent,
    prompt: str,
    show: Callable[[AgentEvent], None],
    on_cancel: Callable[[], None] | None = None,
    *,
    origin: Mapping[str, object] | None = None,
) -> TurnEnded | None:
    """Stream one turn into `show`; its `TurnEnded`, or None when a second Ctrl-C
    abandoned it. `on_cancel` runs at the first Ctrl-C (to say so); `origin`: where a
    prompt nobody typed came from (an inbox message's)."""
    loop = asyncio.get_running_loop()
    presses = 0
    ended: list[TurnEnded] = []

    async def consume() -> None:
        async for event in agent.stream(prompt, origin=origin):
            show(event)
            if isinstance(event, TurnEnded):
                ended.append(event)

    consumer = asyncio.ensure_future(consume())

    def interrupt() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            agent.cancel()
            if on_cancel is not None:
                on_cancel()
        else:
            consumer.cancel()

    loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        await consumer
    except asyncio.CancelledError:
        if not consumer.cancelled():
            raise  # the command itself is being stopped (SIGTERM)
        return None
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    return ended[-1] if ended else None
