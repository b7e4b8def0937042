"""`deftly run --watch`: the agent kept running without a terminal, its inbox consumed.

It runs the prompt when one is given, then every prompt that arrives in the agent's inbox
(a cron job firing) as a turn, shown as print mode shows a turn (or as JSON lines). It
needs no input, so it can run under a service manager. SIGINT and SIGTERM end it: a turn
that is running is cancelled first (its tools stopped within the executor's grace period,
the transcript told), then the runtime closes. SIGINT exits 130 (interrupted, as print
mode); SIGTERM exits 0 (a requested stop, as `deftly serve`). A second signal stops
waiting for the cancelled turn.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from deftly.agent.events import AgentEvent, TurnStarted
from deftly.cli.run_inbox import fired_line

if TYPE_CHECKING:
    from deftly.agent import Agent

INTERRUPTED = 130
STOPPED = 0
STOP_CODES = {signal.SIGINT: INTERRUPTED, signal.SIGTERM: STOPPED}
"""The exit status by the signal that ended the watch."""


async def watch_turns(
    agent: Agent,
    prompt: str | None,
    show: Callable[[AgentEvent], None],
    say: Callable[[str], None],
    *,
    announce: bool = True,
) -> int:
    """Run `prompt` (when given), then the inbox's messages, until SIGINT or SIGTERM; the
    exit status. `say` gets a line once the signals are wired (what stops the watch), and
    with `announce` one saying what fired before each such turn."""

    def on_event(event: AgentEvent) -> None:
        if announce and isinstance(event, TurnStarted) and event.origin:
            say(fired_line(event.origin))
        show(event)

    async def consume() -> None:
        async for _ in agent.watch(prompt, on_event=on_event):
            pass

    loop = asyncio.get_running_loop()
    watching = asyncio.ensure_future(consume())
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        received.append(signum)
        watching.cancel()  # the first: the turn is cancelled; a second: stop waiting for it

    for signum in STOP_CODES:
        loop.add_signal_handler(signum, stop, signum)
    say(
        f"deftly: watching session {agent.session_id}: prompts that arrive on their own (cron "
        "jobs) run as turns; SIGINT or SIGTERM ends it"
    )
    try:
        await asyncio.wait({watching})
    finally:
        for signum in STOP_CODES:
            loop.remove_signal_handler(signum)
        if not watching.done():  # this command itself is being cancelled
            watching.cancel()
    if received:
        return STOP_CODES[received[0]]
    watching.result()  # the watch only ends by a signal, or by failing
    raise AssertionError("the watch ended by itself")
