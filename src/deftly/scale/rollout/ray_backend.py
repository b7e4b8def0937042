"""The Ray backend: each task a Ray task on the cluster at `--address` (`auto`: the one this
machine belongs to; none: a local instance for the rollout), with its own resources.

Ray's own retries are off (`max_retries=0`): when a task's worker or node dies the driver
submits it again (up to `retries` times) and says so, so a retried task is reported once,
with its `attempts`. Ctrl-C cancels every task in flight (their turns wind down, then they
are killed). Workers read keys from their own environment; `env` names variables whose
values the driver forwards through the job's runtime_env (never in a task's payload).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from deftly.scale.cluster import ray_session
from deftly.scale.rollout.driver import Sink, died
from deftly.scale.rollout.runner import execute

CANCEL_GRACE = 15.0
"""Seconds cancelled tasks get to wind down before they are killed."""

LIMIT_REFRESH = 2.0
"""Seconds between looks at the cluster's size (the default number of tasks in flight)."""


def _execute(data: dict[str, Any]) -> dict[str, Any]:
    """The Ray task: one rollout task (see `runner.execute`)."""
    return execute(data)


class RayBackend:
    """Runs tasks as Ray tasks. `concurrency` None: as many in flight as the cluster's CPUs
    hold at `num_cpus` each (looked at again as nodes come and go)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        concurrency: int | None = None,
        num_cpus: float = 1.0,
        resources: Mapping[str, float] | None = None,
        env: Sequence[str] = (),
        retries: int = 2,
    ) -> None:
        self.address = address
        self.concurrency = concurrency
        self.num_cpus = num_cpus
        self.resources = dict(resources or {})
        self.env = tuple(env)
        self.retries = retries

    def runtime_env(self) -> dict[str, Any]:
        """The job's runtime_env: the forwarded variables (present in the driver's env)."""
        forwarded = {name: os.environ[name] for name in self.env if name in os.environ}
        return {"env_vars": forwarded} if forwarded else {}

    def run(self, payloads: Sequence[dict[str, Any]], sink: Sink) -> None:
        """Run every payload on the cluster, reporting to `sink` from this thread."""
        with ray_session(self.address, runtime_env=self.runtime_env()) as ray:
            remote = ray.remote(_execute).options(
                num_cpus=self.num_cpus,
                resources=self.resources or None,
                max_retries=0,
                name="deftly-rollout-task",
            )
            _Flight(ray, remote, self, sink).run(payloads)


class _Flight:
    """The tasks in flight on the cluster, and those still to submit."""

    def __init__(self, ray: Any, remote: Any, backend: RayBackend, sink: Sink) -> None:
        self.ray, self.remote, self.backend, self.sink = ray, remote, backend, sink
        self.pending: dict[Any, tuple[dict[str, Any], int]] = {}
        self._limit = 1
        self._looked = 0.0

    def run(self, payloads: Sequence[dict[str, Any]]) -> None:
        todo: deque[tuple[dict[str, Any], int]] = deque((item, 1) for item in payloads)
        try:
            while todo or self.pending:
                while todo and len(self.pending) < self.limit():
                    item, attempt = todo.popleft()
                    self.pending[self.remote.remote(item)] = (item, attempt)
                    self.sink.started(str(item["task"]["id"]))
                ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=0.5)
                for ref in ready:
                    again = self._land(ref)
                    if again is not None:
                        todo.appendleft(again)
        except BaseException:
            self._cancel_all()
            raise

    def limit(self) -> int:
        if self.backend.concurrency:
            return self.backend.concurrency
        now = time.monotonic()
        if now - self._looked > LIMIT_REFRESH:
            self._looked = now
            cpus = float(self.ray.cluster_resources().get("CPU", 1.0))
            self._limit = max(1, int(cpus / max(self.backend.num_cpus, 1e-3)))
        return self._limit

    def _land(self, ref: Any) -> tuple[dict[str, Any], int] | None:
        """Report a finished ref; the task to submit again when its worker died."""
        exceptions = self.ray.exceptions
        item, attempt = self.pending.pop(ref)
        task_id = str(item["task"]["id"])
        try:
            outcome = self.ray.get(ref)
        except exceptions.RayTaskError as exc:  # `execute` itself raised: not a worker's death
            outcome = died(task_id, str(exc).splitlines()[0], attempt)
            outcome.update(stop_reason="internal", error=f"the task failed on its worker: {exc}")
        except exceptions.RayError as exc:
            reason = type(exc).__name__ + ": " + (str(exc).strip().splitlines() or [""])[0][:200]
            if attempt > self.backend.retries:
                outcome = died(task_id, reason, attempt)
            else:
                self.sink.retried(task_id, reason, attempt + 1)
                return item, attempt + 1
        self.sink.finished(outcome, attempt)
        return None

    def _cancel_all(self) -> None:
        refs = list(self.pending)
        for ref in refs:
            self.ray.cancel(ref, force=False)
        if refs:
            self.ray.wait(refs, num_returns=len(refs), timeout=CANCEL_GRACE)
        for ref in refs:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # already finished or gone
                continue
