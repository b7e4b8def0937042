"""The rollout itself, whatever runs it: tasks in, one result line per task out, and what a
backend reports on the way (started, retried, finished) shown as progress."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from deftly.scale.rollout.progress import Progress
from deftly.scale.rollout.results import ResultWriter
from deftly.scale.rollout.runner import Outcome, RunOptions, payload
from deftly.scale.rollout.tasks import Task

WORKER_DIED = "worker_died"


class Sink(Protocol):
    """Where a backend reports its tasks (always from the thread that called `run`)."""

    def started(self, task_id: str) -> None:
        """The task was handed to a worker."""

    def retried(self, task_id: str, reason: str, attempt: int) -> None:
        """The task's worker died (`reason`); it runs again as attempt `attempt`."""

    def finished(self, outcome: dict[str, Any], attempts: int) -> None:
        """The task's outcome (once per task), after `attempts` runs."""


class Backend(Protocol):
    """Runs task payloads somewhere, reporting each to the sink exactly once as finished
    (a retried task included); KeyboardInterrupt stops every task it started and goes on."""

    def run(self, payloads: Sequence[dict[str, Any]], sink: Sink) -> None:
        """Run every payload, reporting to `sink`."""


def died(task_id: str, reason: str, attempts: int) -> dict[str, Any]:
    """The outcome of a task whose workers kept dying."""
    outcome = Outcome(task_id, stop_reason=WORKER_DIED)
    outcome.error = (
        f"the worker running it died {attempts} times (last: {reason}); check the workers' "
        "memory and logs, or raise --retries"
    )
    return outcome.__dict__.copy()


@dataclass
class Summary:
    """How the rollout went, by status."""

    written: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    @property
    def all_ok(self) -> bool:
        """Whether every result written is ok."""
        return set(self.by_status) <= {"ok"}


class _Recorder:
    def __init__(self, writer: ResultWriter, progress: Progress, summary: Summary) -> None:
        self.writer, self.progress, self.summary = writer, progress, summary
        self.reported: set[str] = set()

    def started(self, task_id: str) -> None:
        self.progress.started(task_id)

    def retried(self, task_id: str, reason: str, attempt: int) -> None:
        self.progress.retried(task_id, reason, attempt)

    def finished(self, outcome: dict[str, Any], attempts: int) -> None:
        task_id = str(outcome["id"])
        if task_id in self.reported:  # a backend's double report never makes two lines
            return
        self.reported.add(task_id)
        record = self.writer.write(outcome, attempts)
        self.summary.written += 1
        status = str(record["status"])
        self.summary.by_status[status] = self.summary.by_status.get(status, 0) + 1
        self.progress.finished(record)


def run_rollout(
    tasks: Sequence[Task],
    options: RunOptions,
    backend: Backend,
    writer: ResultWriter,
    progress: Progress,
) -> Summary:
    """Run `tasks` on `backend`, each result written as it arrives."""
    summary = Summary()
    backend.run([payload(task, options) for task in tasks], _Recorder(writer, progress, summary))
    return summary
