"""Conflict-aware concurrency from declared accesses.

A job may start once every *earlier* job it conflicts with has finished; jobs that do not
conflict run at the same time, and later independent work may overtake blocked work, but
never work it conflicts with. This is the reference's rule ("blocked by any active job or
any job queued ahead of it that it conflicts with"), computed incrementally instead of by
comparing each new job with every pending one.

Pending accesses are indexed by path, and a new job waits only on a few representatives
that stand, by transitivity, for everything earlier it conflicts with:

* Along one path, a write waits for the reads since the last write (or for that write) and
  a read waits for the last write.
* A search of a directory and the writes beneath it conflict, but searches do not conflict
  with each other and writes to different files do not either. So each directory keeps
  *phases*: a run of searches, then a run of writes, then searches... A job joins the
  current phase of its kind and waits for the previous phase as a whole (one gate),
  however many jobs it holds.
* A recursive write (rare) waits for the pending readers and writers below it.
* A job with undeclared accesses (`None`) is a barrier; `Accesses.none()` conflicts with
  nothing.

Each job touches O(depth of its paths) index entries, so n jobs cost about n log n.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from deftly.contract.accesses import Accesses, FileAccess, path_key

T = TypeVar("T")
PhaseKind = Literal["search", "write", "mixed"]


@dataclass(eq=False)
class _Waitable:
    """Something jobs wait on: a job, or a phase gate."""

    dependents: list[_Job[Any]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        raise NotImplementedError


@dataclass(eq=False)
class _Job(_Waitable, Generic[T]):
    seq: int = 0
    start: Callable[[], Awaitable[T]] | None = None
    future: asyncio.Future[T] | None = None
    waiting_on: int = 0
    finished: bool = False
    started: bool = False
    memberships: list[set[_Job[Any]]] = field(default_factory=list)
    gates: list[_Phase] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.finished


@dataclass(eq=False)
class _Phase(_Waitable):
    """A run of same-kind jobs at one directory; `prev` is the opposite run before it."""

    kind: PhaseKind = "search"
    prev: _Phase | None = None
    pending: int = 0
    sealed: bool = False

    @property
    def done(self) -> bool:
        return self.sealed and self.pending == 0


@dataclass(eq=False)
class _Chain:
    """Non-recursive accesses to one exact path, in order."""

    last_writer: _Job[Any] | None = None
    readers: set[_Job[Any]] = field(default_factory=set)


@dataclass(eq=False)
class _Node:
    exact: _Chain = field(default_factory=_Chain)
    tree_writer: _Job[Any] | None = None
    phase: _Phase | None = None
    # pending jobs at this path or below, for recursive writes (a later writer of the same
    # path removes the ones it covers)
    sub_writers: set[_Job[Any]] = field(default_factory=set)
    sub_readers: set[_Job[Any]] = field(default_factory=set)


def _ancestors_or_self(key: str) -> list[str]:
    """'/a/b/c' -> ['/', '/a', '/a/b', '/a/b/c'] (a relative key has no '/' root)."""
    if key == "/":
        return ["/"]
    parts = key.split("/")
    out: list[str] = []
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        out.append(prefix if prefix else "/")
    return out


class Scheduler:
    """Runs submitted jobs as soon as their declared accesses allow."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._nodes: dict[str, _Node] = {}
        self._barrier: _Job[Any] | None = None
        self._since_barrier: set[_Job[Any]] = set()
        self._active = 0
        self._pending = 0

    @property
    def running(self) -> int:
        """How many submitted jobs are running now."""
        return self._active

    @property
    def pending(self) -> int:
        """How many submitted jobs have not finished yet (running or waiting)."""
        return self._pending

    def submit(
        self, accesses: Accesses | None, start: Callable[[], Awaitable[T]]
    ) -> asyncio.Future[T]:
        """Queue a job; it starts now if nothing earlier conflicts with it."""
        job: _Job[T] = _Job(
            seq=next(self._seq), start=start, future=asyncio.get_running_loop().create_future()
        )
        self._pending += 1
        waits: set[_Waitable] = set()
        if accesses is None or accesses.is_exclusive:
            self._enter_barrier(job, waits)
        elif accesses.items:
            if self._barrier is not None:
                waits.add(self._barrier)
            self._since_barrier.add(job)
            job.memberships.append(self._since_barrier)
            phases: dict[str, set[PhaseKind]] = {}
            for access in accesses.items:
                assert isinstance(access, FileAccess)
                self._enter_file(job, access, waits, phases)
            for key, kinds in phases.items():
                kind = next(iter(kinds)) if len(kinds) == 1 else "mixed"
                self._join_phase(job, self._nodes[key], kind, waits)
        waits.discard(job)
        for waitable in waits:
            if not waitable.done:
                waitable.dependents.append(job)
                job.waiting_on += 1
        if job.waiting_on == 0:
            self._launch(job)
        assert job.future is not None
        return job.future

    # -- entering the index ---------------------------------------------------------------

    def _node(self, key: str) -> _Node:
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = _Node()
        return node

    def _enter_barrier(self, job: _Job[Any], waits: set[_Waitable]) -> None:
        waits.update(self._since_barrier)
        if self._barrier is not None:
            waits.add(self._barrier)
        self._barrier = job
        self._since_barrier = set()

    def _enter_file(
        self,
        job: _Job[Any],
        access: FileAccess,
        waits: set[_Waitable],
        phases: dict[str, set[PhaseKind]],
    ) -> None:
        key = path_key(access.path)
        node = self._node(key)
        keys = _ancestors_or_self(key)
        lineage = [self._node(k) for k in keys]
        writes = access.operation.writes
        for ancestor in lineage:
            if ancestor.tree_writer is not None:
                waits.add(ancestor.tree_writer)
        if writes:
            for ancestor_key in keys:
                phases.setdefault(ancestor_key, set()).add("write")
        if access.recursive and writes:
            self._enter_tree_write(job, node, lineage, waits)
        elif access.recursive:
            phases.setdefault(key, set()).add("search")
            for ancestor in lineage:
                self._add_member(ancestor.sub_readers, job)
        elif writes:
            self._enter_exact_write(job, node, lineage, waits)
        else:
            chain = node.exact
            if chain.last_writer is not None:
                waits.add(chain.last_writer)
            self._add_member(chain.readers, job)
            for ancestor in lineage:
                self._add_member(ancestor.sub_readers, job)

    def _enter_exact_write(
        self, job: _Job[Any], node: _Node, lineage: list[_Node], waits: set[_Waitable]
    ) -> None:
        chain = node.exact
        covered: set[_Job[Any]] = set(chain.readers)
        if chain.last_writer is not None:
            covered.add(chain.last_writer)
        waits.update(chain.readers or covered)
        chain.last_writer = job
        chain.readers = set()
        for ancestor in lineage:
            if covered:
                ancestor.sub_writers.difference_update(covered)
                ancestor.sub_readers.difference_update(covered)
            self._add_member(ancestor.sub_writers, job)

    def _enter_tree_write(
        self, job: _Job[Any], node: _Node, lineage: list[_Node], waits: set[_Waitable]
    ) -> None:
        covered = node.sub_writers | node.sub_readers
        waits.update(covered)
        node.tree_writer = job
        for ancestor in lineage:
            if covered:
                ancestor.sub_writers.difference_update(covered)
                ancestor.sub_readers.difference_update(covered)
            self._add_member(ancestor.sub_writers, job)

    def _join_phase(
        self,
        job: _Job[Any],
        node: _Node,
        kind: PhaseKind,
        waits: set[_Waitable],
    ) -> None:
        """Join the directory's current run of `kind`, or start a new run after it.

        A job that both searches the directory and writes beneath it ("mixed") conflicts
        with both kinds, so it always forms a run of its own.
        """
        phase = node.phase
        if phase is None or phase.kind != kind or kind == "mixed":
            if phase is not None:
                phase.sealed = True
            previous = phase if phase is not None and not phase.done else None
            phase = node.phase = _Phase(kind=kind, prev=previous)
        if phase.prev is not None:
            if phase.prev.done:
                phase.prev = None
            else:
                waits.add(phase.prev)
        phase.pending += 1
        job.gates.append(phase)

    @staticmethod
    def _add_member(bucket: set[_Job[Any]], job: _Job[Any]) -> None:
        bucket.add(job)
        job.memberships.append(bucket)

    # -- running ----------------------------------------------------------------------

    def _launch(self, job: _Job[Any]) -> None:
        job.started = True
        self._active += 1
        assert job.start is not None and job.future is not None
        try:
            task = asyncio.ensure_future(job.start())
        except BaseException as exc:  # a start that fails synchronously still releases
            self._finish(job)
            if not job.future.done():
                job.future.set_exception(exc)
            return
        task.add_done_callback(lambda t: self._settle(job, t))

    def _settle(self, job: _Job[Any], task: asyncio.Future[Any]) -> None:
        future = job.future
        assert future is not None
        if not future.done():
            if task.cancelled():
                future.cancel()
            elif (exc := task.exception()) is not None:
                future.set_exception(exc)
            else:
                future.set_result(task.result())
        self._finish(job)

    def _finish(self, job: _Job[Any]) -> None:
        job.finished = True
        self._active -= 1
        self._pending -= 1
        for bucket in job.memberships:
            bucket.discard(job)
        job.memberships.clear()
        if self._barrier is job:
            self._barrier = None
        ready: list[_Job[Any]] = []
        self._release(job, ready)
        for gate in job.gates:
            gate.pending -= 1
            if gate.done:
                self._release(gate, ready)
        job.gates.clear()
        ready.sort(key=lambda j: j.seq)
        for dependent in ready:
            self._launch(dependent)
        if self._pending == 0:
            self._nodes.clear()  # nothing pending: drop the index

    @staticmethod
    def _release(waitable: _Waitable, ready: list[_Job[Any]]) -> None:
        for dependent in waitable.dependents:
            dependent.waiting_on -= 1
            if dependent.waiting_on == 0 and not dependent.started:
                ready.append(dependent)
        waitable.dependents.clear()
