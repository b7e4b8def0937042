"""Process trees: an optional capability of an execution environment.

A command may start more processes (`cmd &`, `setsid`, daemons). Following them, stopping
them with their command and keeping a command alive beyond the runtime needs to see the
machine's processes (on Linux, `/proc`) and to be their parent's parent. An environment
that can do that offers a `ProcessTree` (`ExecEnv.process_tree`); one that cannot offers
None, and the shell tools then follow only the process they started: stopping a command
signals that one process, and a command cannot be kept alive beyond the runtime.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path

from deftly.contract.fs import Process

PROCESS_TREE_MISSING = (
    "this environment cannot follow the processes a command starts (it offers no process tree)"
)
"""Why a process-tree feature is not available, for messages to the model."""


async def exit_status(process: Process) -> int:
    """The exit status as soon as `process` exits, even while a process it left behind
    still holds its output pipe (`Process.wait` waits for the pipes too): `wait()` is the
    usual case, at once; otherwise `returncode`, which is set at the exit, is polled
    (backing off to 50 ms). Needs nothing of a process tree."""
    waiter = asyncio.ensure_future(process.wait())
    try:
        delay = 0.002
        while process.returncode is None and not waiter.done():
            await asyncio.wait([waiter], timeout=delay)
            delay = min(delay * 2, 0.05)
    finally:
        if not waiter.done():
            waiter.cancel()
    code = process.returncode
    if code is None:  # wait() finished first and returned the status
        code = waiter.result()
    return code


class ProcessTree(ABC):
    """Seeing and stopping every process a spawned command led to, in one environment."""

    @abstractmethod
    def session_processes(self, session_id: int) -> list[int]:
        """The living processes of a session (or process group) started by `spawn`,
        including those that moved to another process group inside it."""

    @abstractmethod
    async def wait_exit(self, process: Process) -> int:
        """The exit status, as soon as the process exits, even while a process it left
        behind still holds its output pipe (`Process.wait` waits for the pipes too)."""

    @abstractmethod
    def group_alive(self, group_id: int) -> bool:
        """Whether any process is left in a process group (a cheap check)."""

    @abstractmethod
    def process_mark(self) -> int:
        """A point in time on the clock process start times use (0: not available)."""

    @abstractmethod
    def stray_processes(self, sessions: Mapping[int, int]) -> dict[int, list[int]]:
        """For sessions whose first process has ended (session id -> `process_mark()` at
        that moment): the processes still running in each, counted only when at least one
        of them started before that mark (a later session with a reused id is not ours)."""

    def adopt_orphans(self) -> bool:
        """Have orphaned descendants (a `setsid` child whose parent exited) come back to
        this process instead of init, so `marked_children` finds them. Whether it works."""
        return False

    @abstractmethod
    def marked_children(self, variable: str) -> dict[int, str]:
        """Living children of this process whose environment sets `variable` (pid ->
        its value): with `adopt_orphans`, the orphans a command left behind."""

    @abstractmethod
    def signal_process(self, pid: int, signal_number: int) -> bool:
        """Signal one process found by `marked_children` or `session_processes` (and,
        when it leads one, its session); whether it was still there."""

    @abstractmethod
    def signal_one(self, pid: int, signal_number: int) -> bool:
        """Signal exactly one process (none of its session); whether it was there."""

    def reap_adopted(self) -> int:
        """Collect the exit status of adopted children that ended (found earlier by
        `marked_children`), so they do not stay zombies. Returns how many."""
        return 0

    @abstractmethod
    def signal_session(self, session_id: int, signal_number: int) -> int:
        """Send a signal to every process of a session started by `spawn`: its process
        group and any member that left the group. Returns how many were signalled."""

    @abstractmethod
    def hand_off_output(
        self,
        process: Process,
        log_path: Path,
        limit: int | None,
        flush: Callable[[bytes], None],
    ) -> None:
        """Stop reading a running process's output and let it go on into `log_path`
        (at most `limit` more bytes, the rest discarded) without this process: the
        output it already sent is given to `flush` first. Used to keep a command alive
        beyond the runtime; its stdout must not break when the runtime goes away."""
