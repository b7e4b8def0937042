"""Background tasks of every kind on one board per session: commands, sub-agents, questions.

A feature that starts work which outlives the tool call (a Bash command in the
background, a sub-agent, a question nobody has answered yet) posts it on the session's
`TaskBoard` as a `BackgroundTask`. The task tools (TaskList, TaskOutput, TaskStop,
WaitFor) see every task on the board whatever its kind, and when a task ends the board
keeps one notice for the agent that started it (its `owner`), given out once as a
"task_finished" injection of that agent (the runtime wires this for every agent).

The board is a session service: the runtime creates it, so a tool's constructor or a
feature asks for it by type (`ctx.services.find(TaskBoard)`). A feature never needs
another feature's tasks: it sees them here.

Work that runs in this process and prints text can use `TextTask`, a ready-made task::

    board = ctx.services.find(TaskBoard)
    task = TextTask(board, "agent", "review the parser", owner=ctx.agent_id,
                    stopper=stop_the_child)       # async (reason) -> None
    task.write("step 1 done\\n")                    # what TaskOutput shows
    task.finish(TaskStatus.COMPLETED)             # the owner is told once

Anything else implements the `BackgroundTask` protocol itself (the shell's `ShellTask`
does), posts it with `board.post(task)` and calls `board.ended(task)` when it ends.
Call the board on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import string
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from deftly.contract.records import frozen
from deftly.contract.tool import CancelToken

log = logging.getLogger(__name__)

KEEP_FINISHED = 200
"""Tasks that ended and were reported stay listed up to this many (the oldest go first)."""
_ID_ALPHABET = string.digits + string.ascii_lowercase


class TaskStatus(StrEnum):
    """Where a task is: running, or how it ended."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    KILLED = "killed"
    TIMED_OUT = "timed_out"


@frozen
class OutputSnapshot:
    """The newest part of a task's output, as TaskOutput shows it."""

    text: str
    """The newest output, at most the size asked for."""
    size: int
    """How much output there is in all, in bytes (UTF-8 for text)."""
    more: bool
    """`text` is only the end: there is more before it."""
    path: Path | None = None
    """Where the whole output can be read (with Read or Grep), when it is kept in a file."""


@runtime_checkable
class BackgroundTask(Protocol):
    """What the task tools need of a task, whatever its kind."""

    @property
    def id(self) -> str:
        """Unique in the session, with its kind as prefix: "bash-1a2b3c4d", "agent-…"."""
        ...

    @property
    def kind(self) -> str:
        """ "bash", "agent", "question", ...: the prefix of its id."""
        ...

    @property
    def description(self) -> str:
        """A few words on what it does (for lists and notices)."""
        ...

    @property
    def owner(self) -> str:
        """The `agent_id` of the agent that started it; it is told when the task ends."""
        ...

    @property
    def status(self) -> TaskStatus:
        """RUNNING until it ends, then how it ended."""
        ...

    @property
    def started_at(self) -> float:
        """When it started (`time.time()`)."""
        ...

    @property
    def ended_at(self) -> float | None:
        """When it ended (`time.time()`), None while it runs."""
        ...

    @property
    def running(self) -> bool:
        """Whether it has not ended yet."""
        ...

    reported: bool
    """The model was told how it ended (by a tool or a notice): no notice after that."""

    def outcome(self) -> str:
        """How it ended, in words: "running", "completed", "failed (exit code 2)"."""
        ...

    def output(self, limit: int) -> OutputSnapshot:
        """Its newest output, at most `limit` bytes."""
        ...

    async def wait(self, seconds: float | None = None) -> bool:
        """Wait for its end; True if it ended within `seconds` (None: no limit)."""
        ...

    async def stop(self, reason: str) -> None:
        """Stop it and return once it has ended (`reason` says why, e.g. "stopped by
        TaskStop"); a task that already ended is left as it is."""
        ...


@frozen
class TaskEnded:
    """A task ended and its owner has not been told yet. Kinds may add fields (the shell's
    `TaskNotice` adds the exit code, the command and the log path)."""

    task_id: str
    kind: str
    owner: str
    status: TaskStatus
    description: str
    message: str
    """What the model reads."""


EndListener = Callable[[TaskEnded], None]
"""Told of every notice the board keeps (the runtime turns them into events)."""


def new_task_id(kind: str) -> str:
    """A fresh id such as "bash-1a2b3c4d" (not checked against a board: `TaskBoard.new_id`)."""
    return kind + "-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


def format_duration(seconds: float) -> str:
    """`850ms`, `12s`, `3m 05s`, `1h 02m`."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    if seconds < 60:
        whole = seconds >= 10 or float(seconds).is_integer()
        return f"{seconds:.0f}s" if whole else f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def ran_for(task: BackgroundTask, now: float | None = None) -> float:
    """Seconds from its start to its end (to now while it runs)."""
    end = task.ended_at if task.ended_at is not None else (now or time.time())
    return max(end - task.started_at, 0.0)


def end_message(task: BackgroundTask) -> str:
    """The notice a task's owner reads when it ends (the generic wording)."""
    return (
        f"Background task {task.id} ({task.description}) ended: {task.outcome()} after "
        f"{format_duration(ran_for(task))}. "
        f'Use TaskOutput(task_id="{task.id}") to read the end of its output.'
    )


class TaskBoard:
    """The session's background tasks, of every kind, and the notices of those that ended."""

    def __init__(self) -> None:
        self._tasks: dict[str, BackgroundTask] = {}
        self._notices: dict[str, TaskEnded] = {}
        self._listeners: list[EndListener] = []
        self._lock = threading.Lock()
        self._closing = False

    # -- posting -------------------------------------------------------------------------

    def new_id(self, kind: str) -> str:
        """A fresh id for a task of `kind` that no task on the board has."""
        while True:
            task_id = new_task_id(kind)
            if task_id not in self._tasks:
                return task_id

    def post(self, task: BackgroundTask) -> None:
        """Put a task on the board (again is fine); another task with its id is an error."""
        known = self._tasks.get(task.id)
        if known is not None and known is not task:
            raise ValueError(f"another task already has the id {task.id!r}")
        self._tasks[task.id] = task

    def ended(self, task: BackgroundTask, notice: TaskEnded | None = None) -> None:
        """The poster says `task` ended: unless the model already heard of it (or the
        session is closing), keep `notice` (by default the generic `end_message`) for its
        owner and tell the listeners."""
        if task.reported or self._closing or task.id not in self._tasks:
            self._prune()
            return
        if notice is None:
            notice = TaskEnded(
                task.id, task.kind, task.owner, task.status, task.description, end_message(task)
            )
        with self._lock:
            self._notices[task.id] = notice
        for listener in tuple(self._listeners):
            try:
                listener(notice)
            except Exception:  # a listener's failure must not undo the task's ending
                log.exception("a task-board listener failed")
        self._prune()

    def forget(self, task_id: str) -> None:
        """Take a task off the board (with its notice)."""
        self._tasks.pop(task_id, None)
        with self._lock:
            self._notices.pop(task_id, None)

    def listen(self, listener: EndListener) -> Callable[[], None]:
        """Tell `listener` of every notice kept from now on; returns the way to stop."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    # -- reading -------------------------------------------------------------------------

    def get(self, task_id: str) -> BackgroundTask | None:
        """The task with this id (surrounding spaces ignored), or None."""
        return self._tasks.get(task_id.strip())

    def entries(
        self, *, active_only: bool = False, kind: str | None = None
    ) -> list[BackgroundTask]:
        """The tasks on the board, oldest first: all, or only running ones / one kind."""
        return [
            t
            for t in self._tasks.values()
            if (t.running or not active_only) and (kind is None or t.kind == kind)
        ]

    # -- notices -------------------------------------------------------------------------

    def mark_reported(self, tasks: Iterable[BackgroundTask]) -> None:
        """The model now knows these ended: their notices are dropped, none comes later."""
        for task in tasks:
            if not task.running:
                task.reported = True
                with self._lock:
                    self._notices.pop(task.id, None)

    def pending_notices(self, *, kind: str | None = None) -> list[TaskEnded]:
        """The notices not given out yet (without taking them)."""
        with self._lock:
            return [n for n in self._notices.values() if kind is None or n.kind == kind]

    def take_notices(self, owner: str | None = None, *, kind: str | None = None) -> list[TaskEnded]:
        """The notices for the model's next turn, each given out once: all of them, or
        those of the tasks `owner` (an agent id) started, or of one kind."""
        with self._lock:
            if not self._notices:
                return []  # asked after every result: the common case costs nothing
            taken = [
                n
                for n in self._notices.values()
                if (owner is None or n.owner == owner) and (kind is None or n.kind == kind)
            ]
            for notice in taken:
                del self._notices[notice.task_id]
        for notice in taken:
            task = self._tasks.get(notice.task_id)
            if task is not None:
                task.reported = True
        return taken

    # -- waiting -------------------------------------------------------------------------

    async def wait_any(
        self, tasks: Iterable[BackgroundTask], seconds: float, cancel: CancelToken | None = None
    ) -> None:
        """Return when any of the tasks ends, `cancel` fires, or `seconds` pass."""
        waits: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(t.wait(None)) for t in tasks if t.running
        ]
        if not waits:
            return
        if cancel is not None:
            waits.append(asyncio.ensure_future(cancel.wait()))
        try:
            await asyncio.wait(waits, timeout=max(seconds, 0), return_when="FIRST_COMPLETED")
        finally:
            for waiter in waits:
                waiter.cancel()

    # -- closing -------------------------------------------------------------------------

    @property
    def closing(self) -> bool:
        """The session is closing: endings are no longer announced."""
        return self._closing

    def close(self) -> None:
        """The session closes: no more notices; the board is empty after (each poster
        stops its own tasks)."""
        self._closing = True
        with self._lock:
            self._notices.clear()
        self._tasks.clear()

    def _prune(self) -> None:
        finished = [t for t in self._tasks.values() if not t.running and t.reported]
        for task in finished[: max(len(finished) - KEEP_FINISHED, 0)]:
            del self._tasks[task.id]


Stopper = Callable[[str], Awaitable[None]]
"""Asked to stop a `TextTask`'s work (with the reason); the task ends when it returns."""


class TextTask:
    """A ready-made `BackgroundTask` for work in this process whose output is text kept
    in memory (a sub-agent, a pending question). Posted on `board` when made; its worker
    calls `write` as it goes and `finish` once at the end. Use it on the event loop."""

    def __init__(
        self,
        board: TaskBoard,
        kind: str,
        description: str,
        *,
        owner: str = "",
        stopper: Stopper | None = None,
        keep_chars: int = 1_000_000,
    ) -> None:
        self.id = board.new_id(kind)
        self.kind = kind
        self.description = " ".join(description.split()) or kind
        self.owner = owner
        self.status = TaskStatus.RUNNING
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.detail = ""
        """A few words on how it ended ("stopped by TaskStop"), shown in its outcome."""
        self.reported = False
        self.board = board
        self._stopper = stopper
        self._keep = keep_chars
        self._text = ""
        self._written = 0
        self._done = asyncio.Event()
        board.post(self)

    @property
    def running(self) -> bool:
        """Whether it has not ended yet."""
        return not self._done.is_set()

    def write(self, text: str) -> None:
        """Add to its output (the oldest text goes beyond `keep_chars`)."""
        self._written += len(text.encode())
        self._text = (self._text + text)[-self._keep :]

    def finish(self, status: TaskStatus, detail: str = "", *, message: str | None = None) -> None:
        """It ended (once; later calls are ignored): its owner will be told, with
        `message` instead of the generic notice when given (a question's answer)."""
        if not self.running:
            return
        if status is TaskStatus.RUNNING:
            raise ValueError("a task finishes with an end status, not RUNNING")
        self.status = status
        self.detail = detail
        self.ended_at = time.time()
        self._done.set()
        notice = None
        if message is not None:
            notice = TaskEnded(self.id, self.kind, self.owner, status, self.description, message)
        self.board.ended(self, notice)

    def outcome(self) -> str:
        """ "running", or its status with the detail of its finish: "killed (stopped)"."""
        if self.status is TaskStatus.RUNNING:
            return "running"
        return f"{self.status.value} ({self.detail})" if self.detail else self.status.value

    def output(self, limit: int) -> OutputSnapshot:
        """The newest of what was written, at most `limit` bytes."""
        data = self._text.encode()
        tail = data[-limit:] if limit > 0 else b""
        text = tail.decode("utf-8", "ignore")
        return OutputSnapshot(text, self._written, more=len(tail) < self._written)

    async def wait(self, seconds: float | None = None) -> bool:
        """Wait for `finish`; True if it came within `seconds` (None: no limit)."""
        if not self.running:
            return True
        try:
            await asyncio.wait_for(self._done.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def stop(self, reason: str) -> None:
        """Ask the stopper to end the work, then finish as killed (unless the work
        finished otherwise meanwhile)."""
        if not self.running:
            return
        if self._stopper is not None:
            await self._stopper(reason)
        self.finish(TaskStatus.KILLED, reason)
