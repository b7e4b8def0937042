"""A test-only task kind written against the `BackgroundTask` protocol alone (not
`TextTask`), to show the task tools and notices need nothing of the shell."""

from __future__ import annotations

import asyncio
import time

from deftly.session.tasks import OutputSnapshot, TaskBoard, TaskStatus


class FakeTask:
    """A "fake" task: ends when the test says so, or when it is stopped."""

    kind = "fake"

    def __init__(self, board: TaskBoard, description: str, owner: str) -> None:
        self.id = board.new_id(self.kind)
        self.description = description
        self.owner = owner
        self.status = TaskStatus.RUNNING
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.reported = False
        self.text = ""
        self.stops: list[str] = []
        self.waited = asyncio.Event()
        """Someone is waiting for this task (a tool got as far as waiting)."""
        self._board = board
        self._done = asyncio.Event()
        self._why = ""
        board.post(self)

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def end(self, status: TaskStatus, why: str) -> None:
        self.status, self._why, self.ended_at = status, why, time.time()
        self._done.set()
        self._board.ended(self)

    def outcome(self) -> str:
        return "running" if self.running else f"{self.status.value} ({self._why})"

    def output(self, limit: int) -> OutputSnapshot:
        data = self.text.encode()
        tail = data[-limit:]
        return OutputSnapshot(tail.decode(), len(data), more=len(tail) < len(data))

    async def wait(self, seconds: float | None = None) -> bool:
        self.waited.set()
        try:
            await asyncio.wait_for(self._done.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def stop(self, reason: str) -> None:
        self.stops.append(reason)
        if self.running:
            self.end(TaskStatus.KILLED, reason)
