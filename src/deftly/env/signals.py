"""Stop signals (SIGINT, SIGTERM, SIGHUP) handled in nested scopes on one event loop.

`loop.add_signal_handler` keeps one handler per signal, and removing it puts back the
default, which for SIGTERM is to die on the spot. So a scope inside another (the command
cancels its work on SIGTERM; `deftly serve` stops serving on it) used to leave the signal
deadly once it ended: a SIGTERM while serve was closing its mounted servers killed deftly
before it could, and orphaned them. Here every scope pushes its handler onto the signal's
stack and leaving a scope gives the signal back to the scope around it; only when none is
left is the default restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import weakref
from collections.abc import Callable, Iterable, Iterator

OnSignal = Callable[[int], None]
"""Called with the signal's number."""

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
)

_stacks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, list[OnSignal]]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.contextmanager
def on_stop_signals(
    handler: OnSignal, signals: Iterable[signal.Signals] = STOP_SIGNALS
) -> Iterator[None]:
    """Within this scope, `handler` answers `signals` on the running loop (and no scope
    outside it does). Where the loop cannot take signal handlers (not the main thread),
    nothing is installed."""
    loop = asyncio.get_running_loop()
    stacks = _stacks.setdefault(loop, {})
    installed: list[int] = []
    for signum in signals:
        stack = stacks.setdefault(signum, [])
        try:
            loop.add_signal_handler(signum, _dispatch, stack, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            continue
        stack.append(handler)
        installed.append(signum)
    try:
        yield
    finally:
        for number in installed:
            stack = stacks[number]
            del stack[len(stack) - 1 - stack[::-1].index(handler)]  # this scope's: the last
            if not stack:
                loop.remove_signal_handler(number)


def _dispatch(stack: list[OnSignal], signum: int) -> None:
    if stack:
        stack[-1](signum)
