"""Room on the interpreter's frame stack for a long-running event loop.

CPython (3.11 to 3.13 at least) keeps the frames of running Python functions in chunks of
16 KiB, and frees a chunk as soon as the frame at its start returns. An event loop whose
callbacks' call chains reach across a chunk boundary therefore maps a chunk, faults its
pages in and unmaps it again at every crossing: under `deftly serve`, five times per
`tools/call` (ten system calls and their page faults on every call, about 8% of a small
Read's round trip on a 2-core VM).

`with_stack_room(fn, arg)` calls `fn` from a frame too big for a 16 KiB chunk, so one
64 KiB chunk is mapped for it, once; `fn` and all it calls run in the ~29 KiB that chunk
has to spare and cross no boundary unless a call chain goes deeper than that.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, TypeVar

A = TypeVar("A")
T = TypeVar("T")

SPARE_SLOTS = 4400
"""Unused local variables of the calling frame: 4,400 slots of 8 bytes are more than
32 KiB, which CPython rounds up to a chunk of 64 KiB."""


def _roomy(fn: Callable[[Any], Any], arg: Any) -> Any:
    return fn(arg)


@functools.cache  # made on first use (about 1 ms): only commands with a loop pay for it
def _with_spare_slots(function: Callable[..., Any], slots: int) -> Callable[..., Any]:
    """`function` with `slots` more (never used) local variables in its frame."""
    code = function.__code__
    names = code.co_varnames + tuple(map("_spare{}".format, range(slots)))
    roomy = code.replace(co_varnames=names, co_nlocals=len(names))
    return types.FunctionType(roomy, function.__globals__, function.__name__)


def with_stack_room(fn: Callable[[A], T], arg: A) -> T:
    """`fn(arg)`, called from a frame with a stack chunk to itself (see the module's
    docstring): for the call that runs an event loop, `with_stack_room(asyncio.run, main())`."""
    result: T = _with_spare_slots(_roomy, SPARE_SLOTS)(fn, arg)
    return result
