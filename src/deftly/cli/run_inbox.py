"""The interactive `deftly run` between turns: the prompt raced against the agent's inbox.

While the person has not pressed Enter the agent is idle, so the prompt waits on the inbox
too. A message that arrives (a cron job firing) ends the prompt cleanly: the half-typed
text is kept for the next prompt, the prompt's line is erased, and the message runs as the
next turn. A line typed at the same moment as a message arrives wins; the message goes
back to the inbox and runs after it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompt_toolkit import PromptSession

from deftly.session.inbox import Inbox, InboxMessage

PROMPT = "› "


def fired_line(origin: Mapping[str, object]) -> str:
    """What the person is told when a prompt nobody typed starts a turn."""
    kind = origin.get("kind")
    if kind != "cron_job":
        return f"⏰ A queued prompt arrived ({kind})" if kind else "⏰ A queued prompt arrived"
    line = f"⏰ Cron job {origin.get('job_id') or '?'} fired"
    if origin.get("cron"):
        line += f" ({origin['cron']})"
    count = origin.get("coalesced_count")
    if isinstance(count, int) and count > 1:
        line += f": {count} fires held while the agent was busy, run as one"
    if origin.get("stale") is True:
        line += "; the job is 7 days old, so it was deleted after this fire"
    return line


@dataclass
class Typed:
    """The person pressed Enter on this line."""

    line: str


@dataclass
class Arrived:
    """An inbox message ended the prompt; `kept` is the text typed so far."""

    message: InboxMessage
    kept: str


class _Interrupted(Exception):
    """Ends a running prompt because an inbox message came."""


async def next_input(
    session: PromptSession[str], inbox: Inbox, default: str = ""
) -> Typed | Arrived:
    """The line typed at the prompt (which starts with `default`), or the inbox message that
    came first. Ctrl-C and Ctrl-D at the prompt raise as `prompt_async` does."""
    queued = inbox.take()
    if queued is not None:
        return Arrived(queued, default)
    started = asyncio.Event()
    reading = asyncio.ensure_future(_read(session, default, started))
    arrived = asyncio.ensure_future(inbox.get())
    message: InboxMessage | None = None
    try:
        await asyncio.wait({reading, arrived}, return_when=asyncio.FIRST_COMPLETED)
        if not arrived.done():
            arrived.cancel()  # a cancelled get() leaves any message in the inbox
            return _typed(await reading)
        message = arrived.result()
        kept = await _end_prompt(session, reading, started)
    except BaseException:
        for task in (reading, arrived):
            task.cancel()
        if message is not None:  # not lost: it runs when something consumes the inbox
            inbox.put(message)
        raise
    if kept is None:  # the person's line won the race
        inbox.put(message)
        return _typed(await reading)
    return Arrived(message, kept)


async def _read(
    session: PromptSession[str], default: str, started: asyncio.Event
) -> str | KeyboardInterrupt | EOFError:
    """The prompt, in a task of its own: Ctrl-C and Ctrl-D come back as values, because a
    KeyboardInterrupt escaping a task would stop the whole event loop."""
    try:
        return await session.prompt_async(PROMPT, default=default, pre_run=started.set)
    except (KeyboardInterrupt, EOFError) as exc:
        return exc


def _typed(read: str | KeyboardInterrupt | EOFError) -> Typed:
    if isinstance(read, BaseException):
        raise read
    return Typed(read)


async def _end_prompt(
    session: PromptSession[str],
    reading: asyncio.Future[str | KeyboardInterrupt | EOFError],
    started: asyncio.Event,
) -> str | None:
    """End the running prompt, erasing its line: the text typed so far, or None when the
    prompt had already ended with a line of its own."""
    began = asyncio.ensure_future(started.wait())
    either: set[asyncio.Future[Any]] = {reading, began}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        began.cancel()
    if reading.done():
        return None
    app = session.app
    kept = session.default_buffer.text
    app.erase_when_done = True
    try:
        try:
            app.exit(exception=_Interrupted())
        except Exception:  # the line was accepted a moment ago
            return None
        with contextlib.suppress(_Interrupted):
            await reading
    finally:
        app.erase_when_done = False
    return kept
