"""Stop-signal scopes nest: the innermost answers, leaving it gives the signal back to the
scope outside (it used to restore the default, so a SIGTERM while `deftly serve` closed its
mounted servers killed deftly and orphaned them), and leaving the last restores the
default. Real signals sent to this process."""

from __future__ import annotations

import asyncio
import os
import signal

from deftly.env.signals import on_stop_signals

Seen = asyncio.Queue[tuple[str, int]]


async def _signalled(seen: Seen, signum: signal.Signals) -> tuple[str, int]:
    os.kill(os.getpid(), signum)
    async with asyncio.timeout(30):
        return await seen.get()


async def test_the_innermost_scope_answers_and_leaving_it_restores_the_outer() -> None:
    seen: Seen = asyncio.Queue()
    before = signal.getsignal(signal.SIGTERM)
    with on_stop_signals(lambda n: seen.put_nowait(("outer", n))):
        assert await _signalled(seen, signal.SIGTERM) == ("outer", signal.SIGTERM)
        with on_stop_signals(lambda n: seen.put_nowait(("inner", n))):
            assert await _signalled(seen, signal.SIGTERM) == ("inner", signal.SIGTERM)
            assert await _signalled(seen, signal.SIGHUP) == ("inner", signal.SIGHUP)
        # the inner scope is gone: the outer one answers again, not the default (death)
        assert await _signalled(seen, signal.SIGTERM) == ("outer", signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) == before
    assert seen.empty()


async def test_a_scope_for_some_signals_leaves_the_others_alone() -> None:
    seen: Seen = asyncio.Queue()
    with on_stop_signals(lambda n: seen.put_nowait(("all", n))):
        with on_stop_signals(lambda n: seen.put_nowait(("term", n)), [signal.SIGTERM]):
            assert await _signalled(seen, signal.SIGHUP) == ("all", signal.SIGHUP)
            assert await _signalled(seen, signal.SIGTERM) == ("term", signal.SIGTERM)
        assert await _signalled(seen, signal.SIGTERM) == ("all", signal.SIGTERM)
