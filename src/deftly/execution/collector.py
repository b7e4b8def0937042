"""Room in the cyclic garbage collector for the batches in flight.

A batch keeps every call's state alive until its results are in (its task, futures, slot,
execution: some 45 tracked objects a call), and all of it is freed by reference counting,
never by the collector. To CPython's collector that growth looks like garbage in the
making: at its default threshold a 1,000-call batch sets off about 60 young collections
and a full one over the whole heap, a quarter of the batch's time on a small machine.
While any batch is open, the young generation's threshold is raised, and full collections
wait (the first batch after a runtime starts would otherwise pay for the start's own
objects, a 40-75 ms look at the whole heap); young garbage is still collected as before.
The last batch to close puts back what the first one found, unless someone changed it
meanwhile (their setting wins). A collector that is off, or already roomier, is left alone.
"""

from __future__ import annotations

import gc
import threading

YOUNG_THRESHOLD = 20_000
"""Young allocations between collections while a batch is open (CPython's default: 700)."""
OLD_THRESHOLD = 1_000
"""Middle-generation collections before a full one while a batch is open (default: 10)."""


class BatchRoom:
    """Counts the open batches; the first raises the young threshold, the last restores it.
    Thread-safe: runtimes on several event loops share the one collector."""

    def __init__(self, young: int = YOUNG_THRESHOLD, old: int = OLD_THRESHOLD) -> None:
        self._young = young
        self._old = old
        self._lock = threading.Lock()
        self._open = 0
        self._saved: tuple[int, int, int] | None = None
        self._set: tuple[int, int, int] | None = None

    def enter(self) -> None:
        """A batch opened."""
        with self._lock:
            self._open += 1
            if self._open > 1:
                return
            current = gc.get_threshold()
            if 0 < current[0] < self._young:  # 0: the host turned automatic collection off
                self._saved = current
                self._set = (self._young, current[1], max(current[2], self._old))
                gc.set_threshold(*self._set)

    def leave(self) -> None:
        """A batch closed (once per `enter`)."""
        with self._lock:
            self._open = max(0, self._open - 1)
            if self._open or self._saved is None:
                return
            saved, ours = self._saved, self._set
            self._saved = self._set = None
            if gc.get_threshold() == ours:  # unchanged since we raised it
                gc.set_threshold(*saved)


BATCH_ROOM = BatchRoom()
"""The process's one room: every executor's batches count in it."""
