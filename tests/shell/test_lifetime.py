"""Timeouts, stopping, cancelling, closing: no process outlives what owns it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from deftly import CancelToken, Runtime
from deftly.env import LocalEnv
from deftly.features.shell import TaskStatus
from tests.shell.conftest import (
    env_of,
    eventually,
    exec_started,
    marked_sleep,
    new_marker,
    processes_with,
    task_id_in,
    tasks_of,
)


async def test_timeout_moves_to_background_and_close_kills(shell: Any) -> None:
    rt: Runtime = await shell(timeout=1)
    marker = new_marker()
    start = time.monotonic()
    result = await rt.call("Bash", {"command": f"echo started; {marked_sleep(marker)}"})
    assert time.monotonic() - start < 10
    assert not result.is_error
    assert "moved to the background" in result.text and "started" in result.text
    task_id = task_id_in(result.text)
    task = tasks_of(rt).get(task_id)
    assert task is not None and task.running and task.background
    assert processes_with(marker)
    await rt.close()
    assert not processes_with(marker)
    assert task.status is TaskStatus.KILLED


async def test_timeout_kills_when_configured(shell: Any) -> None:
    rt: Runtime = await shell(timeout=1, on_timeout="kill")
    marker = new_marker()
    start = time.monotonic()
    result = await rt.call("Bash", {"command": marked_sleep(marker)})
    assert time.monotonic() - start < 10
    assert result.is_error and "timeout" in result.text
    assert not processes_with(marker)


async def test_grandchildren_that_background_themselves_are_killed(shell: Any) -> None:
    rt: Runtime = await shell(timeout=1)
    outer, inner = new_marker(), new_marker()
    result = await rt.call(
        "Bash",
        {
            "command": f"({marked_sleep(inner)} &); ({marked_sleep(inner)} &) ; "
            f"{marked_sleep(outer)}"
        },
    )
    assert "moved to the background" in result.text
    assert len(processes_with(inner)) == 2 and processes_with(outer)
    await rt.close()
    assert not processes_with(inner) and not processes_with(outer)


async def test_processes_left_behind_by_a_finished_command_are_stopped(shell: Any) -> None:
    # The session and group sweeps of the unsandboxed shell; in the sandbox the PID
    # namespace does this (tests/shell/test_sandbox_default.py).
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    start = time.monotonic()
    result = await rt.call("Bash", {"command": f"({marked_sleep(marker)} &); echo parent-done"})
    assert time.monotonic() - start < 10
    assert not result.is_error
    assert result.text.startswith("parent-done\n")
    assert "leaving 1 process(es)" in result.text and "run_in_background" in result.text
    assert not processes_with(marker)


async def test_a_process_that_changed_group_and_holds_the_pipe_is_stopped_at_exit(
    shell: Any,
) -> None:
    # The session and group sweeps of the unsandboxed shell; in the sandbox the PID
    # namespace does this (tests/shell/test_sandbox_default.py).
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    # `set -m` gives the background job a process group of its own, inside the session.
    result = await rt.call("Bash", {"command": f"set -m; {marked_sleep(marker)} & echo started"})
    assert result.text.startswith("started\n") and "leaving 1 process(es)" in result.text
    assert not processes_with(marker)


async def test_a_process_that_changed_group_quietly_is_stopped_at_close(shell: Any) -> None:
    # The session and group sweeps of the unsandboxed shell; in the sandbox the PID
    # namespace does this (tests/shell/test_sandbox_default.py).
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    command = f"set -m; {marked_sleep(marker)} >/dev/null 2>&1 & echo started"
    result = await rt.call("Bash", {"command": command})
    # Issue 11: its parent exited, so it came back to deftly (a subreaper) carrying the
    # task's mark, and was stopped as the command ended (one /proc pass), not only at close.
    assert result.text.startswith("started\n") and "leaving 1 process(es)" in result.text
    assert not processes_with(marker)
    await rt.close()
    assert not processes_with(marker)


def test_a_process_started_in_the_same_tick_as_the_mark_counts_as_before_it() -> None:
    # The sweep at close only stops processes that started at or before the moment their
    # command ended; a stray spawned in the last clock tick must not slip through.
    env = LocalEnv().process_tree
    late = []
    for _ in range(200):
        proc = subprocess.Popen(["sleep", "5"], start_new_session=True)
        try:
            mark = env.process_mark()
            if env.stray_processes({proc.pid: mark}) != {proc.pid: [proc.pid]}:
                late.append(proc.pid)
        finally:
            proc.kill()
            proc.wait()
    assert late == []


def test_stray_processes_are_told_apart_from_a_reused_session_id() -> None:
    env = LocalEnv().process_tree
    marker = new_marker()
    before = env.process_mark()
    time.sleep(0.05)  # start times have a resolution of one clock tick
    proc = subprocess.Popen(["bash", "-c", marked_sleep(marker)], start_new_session=True)
    try:
        assert eventually_sync(lambda: bool(processes_with(marker)))
        time.sleep(0.05)
        after = env.process_mark()
        assert env.stray_processes({proc.pid: before}) == {}  # started later: not ours
        assert env.stray_processes({proc.pid: after}) == {proc.pid: [proc.pid]}
    finally:
        proc.kill()
        proc.wait()


async def test_term_ignoring_process_gets_sigkill_after_the_grace(shell: Any) -> None:
    rt: Runtime = await shell(kill_grace=0.5)
    marker = new_marker()
    result = await rt.call(
        "Bash",
        {"command": f"trap '' TERM; {marked_sleep(marker)}", "run_in_background": True},
    )
    task_id = task_id_in(result.text)
    assert await eventually(lambda: exec_started(marker))  # the TERM trap is set by then
    start = time.monotonic()
    stopped = await rt.call("TaskStop", {"task_id": task_id})
    assert time.monotonic() - start < 10
    assert "status: killed" in stopped.text and "SIGKILL" in stopped.text
    assert not processes_with(marker)


async def test_batch_cancellation_kills_the_process(shell: Any) -> None:
    rt: Runtime = await shell()
    marker = new_marker()
    token = CancelToken()
    asyncio.get_running_loop().call_later(0.5, lambda: token.cancel("stop", by_user=True))
    start = time.monotonic()
    result = await rt.call("Bash", {"command": marked_sleep(marker)}, cancel=token)
    assert time.monotonic() - start < 10
    assert result.is_error and "interrupted" in result.text
    assert await eventually(lambda: not processes_with(marker))


async def test_cancelling_the_call_task_still_kills_the_process(shell: Any) -> None:
    rt: Runtime = await shell(kill_grace=1.0)
    marker = new_marker()
    call = asyncio.ensure_future(
        rt.call("Bash", {"command": f"trap '' TERM; {marked_sleep(marker)}"})
    )
    assert await eventually(lambda: exec_started(marker))
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call
    assert await eventually(lambda: not processes_with(marker), 20)


async def test_background_timeout_marks_timed_out(shell: Any) -> None:
    rt: Runtime = await shell()
    marker = new_marker()
    result = await rt.call(
        "Bash", {"command": marked_sleep(marker), "run_in_background": True, "timeout": 1}
    )
    task = tasks_of(rt).get(task_id_in(result.text))
    assert task is not None
    assert await task.wait(20)
    assert task.status is TaskStatus.TIMED_OUT and "timeout" in (task.reason or "")
    assert not processes_with(marker)


async def test_detached_task_survives_close_and_keeps_logging(shell: Any) -> None:
    rt: Runtime = await shell()
    marker = new_marker()
    command = f"echo one; sleep 1; echo two; {marked_sleep(marker, 3)}"
    result = await rt.call("Bash", {"command": command, "run_in_background": True})
    tasks = tasks_of(rt)
    task = tasks.get(task_id_in(result.text))
    assert task is not None
    assert await eventually(lambda: task.log.total >= 4)
    tasks.detach(task)
    env = env_of(rt)  # the log is read through it after the runtime closed
    await rt.close()
    try:
        assert processes_with(marker) or await eventually(lambda: bool(processes_with(marker)))
        assert await eventually(lambda: env.read_bytes(task.log.path) == b"one\ntwo\n")
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)


async def test_close_stops_every_running_task(shell: Any) -> None:
    rt: Runtime = await shell()
    markers = [new_marker() for _ in range(3)]
    for marker in markers:
        await rt.call("Bash", {"command": marked_sleep(marker), "run_in_background": True})
    assert await eventually(lambda: all(processes_with(m) for m in markers))
    await rt.close()
    assert not any(processes_with(m) for m in markers)


def eventually_sync(predicate: Callable[[], bool], seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.02)
    return predicate()
