"""`with_stack_room`: code it calls does not map and unmap frame-stack chunks.

Measured by what a mapped chunk costs: the page faults of touching it. A call chain that
crosses a 16 KiB chunk boundary faults in a fresh chunk every time; run with stack room,
the same calls fault nothing new.
"""

from __future__ import annotations

import asyncio
import resource

import pytest

from deftly.contract.stack import with_stack_room

CALLS = 300


def _chain(depth: int) -> int:
    a = b = c = d = e = f = g = h = depth  # a frame of a realistic size
    if depth:
        return _chain(depth - 1)
    return a + b + c + d + e + f + g + h


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _worst_faults() -> int:
    """The most page faults that `CALLS` calls of one chain depth cost, over depths that
    reach more than 16 KiB above the caller (so some depth crosses a chunk boundary)."""
    worst = 0
    for depth in range(0, 120, 4):
        before = _faults()
        for _ in range(CALLS):
            _chain(depth)
        worst = max(worst, _faults() - before)
    return worst


def test_calls_with_stack_room_cross_no_chunk_boundary() -> None:
    plain = _worst_faults()
    roomy = with_stack_room(lambda _: _worst_faults(), None)
    # CPython 3.11-3.13 free a chunk whenever the frame at its start returns: a crossing
    # costs a fresh chunk, with its page faults, on every call
    assert roomy <= max(10, plain // 20), (plain, roomy)


def test_the_result_and_the_errors_come_through() -> None:
    async def main() -> str:
        await asyncio.sleep(0)
        return "done"

    assert with_stack_room(asyncio.run, main()) == "done"

    def fails(_: object) -> None:
        raise LookupError("nothing here")

    with pytest.raises(LookupError, match="nothing here"):
        with_stack_room(fails, None)
