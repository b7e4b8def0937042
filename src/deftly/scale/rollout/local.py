"""The local backend: a pool of worker processes on this machine, each running one task at a
time. A worker that dies (killed, out of memory) is replaced and its task run again, up to
`retries` times; Ctrl-C stops every worker (SIGTERM: their turns are cancelled and what
they started is stopped; SIGKILL after a grace period)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from deftly.scale.rollout.driver import Sink, died

STOP_GRACE = 15.0
"""Seconds a stopped worker gets to wind its task down before it is killed."""


def _serve(conn: Connection) -> None:
    """A worker process: run the payloads it is sent, one at a time, until told to stop."""
    from deftly.scale.rollout.runner import execute

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides; it sends SIGTERM
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        try:
            outcome = execute(item)
        except BaseException:  # stopped by the driver (SIGTERM) mid-task: no result
            return
        conn.send(outcome)


class LocalBackend:
    """Runs tasks in `concurrency` worker processes."""

    def __init__(self, concurrency: int | None = None, retries: int = 2) -> None:
        self.concurrency = max(1, concurrency or os.cpu_count() or 1)
        self.retries = retries
        self._context = multiprocessing.get_context("spawn")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._workers: set[Any] = set()

    def run(self, payloads: Sequence[dict[str, Any]], sink: Sink) -> None:
        """Run every payload, reporting to `sink` from this thread."""
        todo: queue.Queue[dict[str, Any]] = queue.Queue()
        for item in payloads:
            todo.put(item)
        events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        slots = [
            threading.Thread(target=self._slot, args=(todo, events), daemon=True)
            for _ in range(min(self.concurrency, len(payloads)))
        ]
        for slot in slots:
            slot.start()
        try:
            while any(slot.is_alive() for slot in slots) or not events.empty():
                try:
                    event = events.get(timeout=0.5)
                except queue.Empty:
                    continue
                kind, *args = event
                getattr(sink, kind)(*args)
        except BaseException:
            self._stop_all()
            raise
        finally:
            for slot in slots:
                slot.join(timeout=STOP_GRACE)

    def _slot(
        self, todo: queue.Queue[dict[str, Any]], events: queue.Queue[tuple[Any, ...]]
    ) -> None:
        worker: tuple[Any, Connection] | None = None
        try:
            while not self._stop.is_set():
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                task_id = str(item["task"]["id"])
                attempt = 1
                while not self._stop.is_set():
                    if worker is None:
                        worker = self._spawn()
                    process, conn = worker
                    events.put(("started", task_id))
                    outcome, reason = self._one(process, conn, item)
                    if outcome is not None:
                        events.put(("finished", outcome, attempt))
                        break
                    self._forget(process)
                    worker = None
                    if self._stop.is_set():
                        return
                    if attempt > self.retries:
                        events.put(("finished", died(task_id, reason, attempt), attempt))
                        break
                    attempt += 1
                    events.put(("retried", task_id, reason, attempt))
        finally:
            if worker is not None:
                self._close(*worker)

    def _one(
        self, process: Any, conn: Connection, item: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, str]:
        try:
            conn.send(item)
            ready = wait([conn, process.sentinel])
            if conn in ready:
                return conn.recv(), ""
        except (EOFError, OSError, BrokenPipeError):
            pass
        process.join(timeout=STOP_GRACE)
        code = process.exitcode
        if code is not None and code < 0:
            return None, f"the worker process was killed by {signal.Signals(-code).name}"
        return None, f"the worker process exited with status {code}"

    def _spawn(self) -> tuple[Any, Connection]:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(child,), daemon=True)
        process.start()
        child.close()
        with self._lock:
            self._workers.add(process)
        return process, parent

    def _forget(self, process: Any) -> None:
        with self._lock:
            self._workers.discard(process)

    def _close(self, process: Any, conn: Connection) -> None:
        with contextlib.suppress(OSError):
            conn.send(None)
        process.join(timeout=STOP_GRACE)
        if process.is_alive():
            process.kill()
            process.join()
        self._forget(process)
        conn.close()

    def _stop_all(self) -> None:
        """Stop every worker now: SIGTERM (the task winds down), SIGKILL after the grace."""
        self._stop.set()
        with self._lock:
            workers = list(self._workers)
        for process in workers:
            if process.is_alive():
                process.terminate()
        for process in workers:
            process.join(timeout=STOP_GRACE)
            if process.is_alive():
                process.kill()
                process.join()
