"""How a rollout shows itself going: at a terminal a progress bar (done / running / failed,
rate, ETA); otherwise one plain line per event, for logs."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class Progress:
    """Counts the rollout's tasks and shows them (a context manager)."""

    def __init__(
        self, total: int, stream: TextIO | None = None, *, bar: bool | None = None
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.bar = self.stream.isatty() if bar is None else bar
        self.done = self.running = self.failed = 0
        self._began = time.monotonic()
        self._live: Any = None
        self._task_id: Any = None

    def __enter__(self) -> Progress:
        if self.bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self._live = Bar(
                TextColumn("rollout"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._live.start()
            self._task_id = self._live.add_task("rollout", total=self.total, counts=self._counts())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._refresh()
            self._live.stop()
            self._live = None

    def started(self, task_id: str) -> None:
        """A task began running on a worker."""
        self.running += 1
        self._refresh()

    def retried(self, task_id: str, reason: str, attempt: int) -> None:
        """A task's worker died; the task runs again (attempt `attempt`)."""
        self.running = max(0, self.running - 1)
        self._say(f"retry {task_id}: {reason}; running it again (attempt {attempt})")

    def finished(self, record: dict[str, Any]) -> None:
        """A task's result line was written."""
        self.running = max(0, self.running - 1)
        self.done += 1
        if record.get("status") != "ok":
            self.failed += 1
        line = (
            f"[{self.done}/{self.total}] {record['id']} {record['status']} "
            f"({record['stop_reason']}, {_steps(record['steps'])}, {record['seconds']:.1f} s)"
        )
        if record.get("error"):
            line += f": {record['error']}"
        if self._live is None:
            self._say(f"{line} · {self._counts()}")
        elif record.get("status") != "ok":
            self._live.console.print(line, highlight=False, markup=False)
        self._refresh()

    def say(self, line: str) -> None:
        """A line about the rollout as a whole."""
        self._say(line)

    def _say(self, line: str) -> None:
        if self._live is not None:
            self._live.console.print(line, highlight=False, markup=False)
        else:
            print(line, file=self.stream, flush=True)

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._task_id, completed=self.done, counts=self._counts())

    def _counts(self) -> str:
        elapsed = max(time.monotonic() - self._began, 1e-9)
        rate = self.done / elapsed * 60
        return f"done {self.done} · running {self.running} · failed {self.failed} · {rate:.1f}/min"


def _steps(count: int) -> str:
    return "1 step" if count == 1 else f"{count} steps"
