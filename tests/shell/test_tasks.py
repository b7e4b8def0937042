"""Background tasks and the tools that follow them: TaskList, TaskOutput, TaskStop, WaitFor."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.execution import RuntimeNotice
from deftly.features.shell import TaskNotice, TaskStatus
from tests.shell.conftest import (
    eventually,
    marked_sleep,
    new_marker,
    processes_with,
    read_named,
    task_id_in,
    tasks_of,
)


async def start(rt: Runtime, command: str, **extra: Any) -> str:
    result = await rt.call("Bash", {"command": command, "run_in_background": True, **extra})
    assert not result.is_error, result.text
    return task_id_in(result.text)


async def test_run_in_background_returns_a_task_id_at_once(shell: Any) -> None:
    rt: Runtime = await shell()
    marker = new_marker()
    begin = time.monotonic()
    result = await rt.call(
        "Bash",
        {"command": marked_sleep(marker), "run_in_background": True, "description": "a nap"},
    )
    assert time.monotonic() - begin < 5
    task_id = task_id_in(result.text)
    assert re.fullmatch(r"bash-[0-9a-z]{8}", task_id)
    assert "notified" in result.text and "log_path: " in result.text
    task = tasks_of(rt).get(task_id)
    assert task is not None and task.running and task.description == "a nap"
    assert await eventually(lambda: bool(processes_with(marker)))


async def test_task_list_shows_running_and_finished(shell: Any) -> None:
    rt: Runtime = await shell()
    empty = await rt.call("TaskList", {})
    assert "none running" in empty.text
    sleeper = await start(rt, marked_sleep(new_marker()))
    quick = await start(rt, "echo quick; exit 4")
    assert await tasks_of(rt).get(quick).wait(20)  # type: ignore[union-attr]
    active = await rt.call("TaskList", {})
    assert sleeper in active.text and "status: running" in active.text
    assert "running_for:" in active.text and "command: exec -a" in active.text
    # the finished one is shown once as "ended since you last heard"
    assert quick in active.text and "exit_code: 4" in active.text
    again = await rt.call("TaskList", {})
    assert quick not in again.text
    everything = await rt.call("TaskList", {"active_only": False})
    assert quick in everything.text and sleeper in everything.text
    assert "status: failed" in everything.text


async def test_task_output_preview_log_and_block(shell: Any) -> None:
    rt: Runtime = await shell(preview_bytes=1024)
    task_id = await start(rt, "seq 1 5000; sleep 0.5; echo done")
    snapshot = await rt.call("TaskOutput", {"task_id": task_id})
    assert not snapshot.is_error and f"task_id: {task_id}" in snapshot.text
    finished = await rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 30})
    assert "status: completed" in finished.text and "exit_code: 0" in finished.text
    assert finished.text.rstrip().endswith("5000\ndone")
    assert "newest output: the last 1 KiB" in finished.text
    log_line = next(x for x in finished.text.splitlines() if x.startswith("log_path: "))
    log = Path(log_line.removeprefix("log_path: "))
    assert read_named(rt, log).decode() == "".join(f"{i}\n" for i in range(1, 5001)) + "done\n"
    assert tasks_of(rt).pending_notices() == []  # TaskOutput told the model


async def test_task_output_block_times_out_without_error(shell: Any) -> None:
    rt: Runtime = await shell()
    task_id = await start(rt, marked_sleep(new_marker()))
    begin = time.monotonic()
    result = await rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 1})
    assert time.monotonic() - begin < 10
    assert not result.is_error
    assert "still running" in result.text and "no output" in result.text


async def test_unknown_task_ids(shell: Any) -> None:
    rt: Runtime = await shell()
    known = await start(rt, "true")
    for tool in ("TaskOutput", "TaskStop"):
        result = await rt.call(tool, {"task_id": "bash-nosuchid"})
        assert result.is_error
        assert '"bash-nosuchid"' in result.text and known in result.text
    waited = await rt.call("WaitFor", {"task_ids": [known, "bash-nosuchid"], "timeout": 1})
    assert waited.is_error and "bash-nosuchid" in waited.text


async def test_task_stop_running_and_finished(shell: Any) -> None:
    rt: Runtime = await shell()
    marker = new_marker()
    task_id = await start(rt, f"echo before-stop; {marked_sleep(marker)}")
    assert await eventually(lambda: bool(processes_with(marker)))
    stopped = await rt.call("TaskStop", {"task_id": task_id})
    assert not stopped.is_error
    assert "status: killed" in stopped.text and "stopped by TaskStop" in stopped.text
    assert "before-stop" in stopped.text
    assert not processes_with(marker)
    assert tasks_of(rt).pending_notices() == []  # no notice after a TaskStop
    again = await rt.call("TaskStop", {"task_id": task_id})
    assert not again.is_error and "already ended" in again.text


async def test_wait_for_any_all_and_none(shell: Any) -> None:
    rt: Runtime = await shell()
    nothing = await rt.call("WaitFor", {"timeout": 1})
    assert "no_tasks" in nothing.text
    fast = await start(rt, "sleep 0.2; echo fast-done")
    slow = await start(rt, "sleep 1.5; echo slow-done")
    anyone = await rt.call("WaitFor", {"task_ids": [fast, slow], "timeout": 30})
    assert "wait_status: completed" in anyone.text
    ended, _, running = anyone.text.partition("[still_running")
    assert fast in ended and "fast-done" in ended and slow in running
    everyone = await rt.call("WaitFor", {"task_ids": [fast, slow], "mode": "all", "timeout": 30})
    assert "wait_status: completed" in everyone.text and "slow-done" in everyone.text
    assert "still_running" not in everyone.text
    assert tasks_of(rt).pending_notices() == []  # both were reported by WaitFor


async def test_wait_for_timeout_is_not_an_error(shell: Any) -> None:
    rt: Runtime = await shell()
    task_id = await start(rt, marked_sleep(new_marker()))
    begin = time.monotonic()
    result = await rt.call("WaitFor", {"timeout": 1})
    assert time.monotonic() - begin < 10
    assert not result.is_error
    assert "wait_status: timed_out" in result.text and task_id in result.text


async def test_wait_for_timeout_out_of_range(shell: Any) -> None:
    rt: Runtime = await shell()
    for bad in (0, 601):
        result = await rt.call("WaitFor", {"timeout": bad})
        assert result.is_error and "timeout" in result.text
    missing = await rt.call("WaitFor", {})
    assert missing.is_error and "timeout" in missing.text
    too_long = await rt.call("TaskOutput", {"task_id": "bash-x", "block": True, "timeout": 601})
    assert too_long.is_error and "timeout" in too_long.text


async def test_finished_task_is_announced_once(shell: Any) -> None:
    rt: Runtime = await shell()
    events: list[RuntimeNotice] = []
    rt.subscribe(
        lambda e: (
            events.append(e) if isinstance(e, RuntimeNotice) and e.kind == "task_finished" else None
        )
    )
    task_id = await start(rt, "echo result-line; exit 2", description="the check")
    tasks = tasks_of(rt)
    assert await tasks.get(task_id).wait(20)  # type: ignore[union-attr]
    assert [e.kind for e in events] == ["task_finished"]
    notice = events[0].data
    assert isinstance(notice, TaskNotice)
    assert notice.task_id == task_id and notice.status is TaskStatus.FAILED
    assert "the check" in notice.message and "exit code 2" in notice.message
    assert [n.task_id for n in tasks.take_notices()] == [task_id]
    assert tasks.take_notices() == []


async def test_wait_for_suppresses_the_notice(shell: Any) -> None:
    rt: Runtime = await shell()
    task_id = await start(rt, "sleep 0.3")
    result = await rt.call("WaitFor", {"task_ids": [task_id], "timeout": 30})
    assert "completed" in result.text
    assert tasks_of(rt).take_notices() == []


async def test_foreground_commands_are_not_listed_or_announced(shell: Any) -> None:
    rt: Runtime = await shell()
    await rt.call("Bash", {"command": "echo hi"})
    assert tasks_of(rt).entries() == []
    assert tasks_of(rt).pending_notices() == []


async def test_a_moved_command_is_announced_when_it_ends(shell: Any) -> None:
    rt: Runtime = await shell(timeout=1)
    result = await rt.call("Bash", {"command": "sleep 1.5; echo late"})
    task = tasks_of(rt).get(task_id_in(result.text))
    assert task is not None and await task.wait(20)
    [notice] = tasks_of(rt).take_notices()
    assert notice.task_id == task.id and notice.status is TaskStatus.COMPLETED
    assert read_named(rt, task.log.path).decode() == "late\n"


async def test_too_many_background_tasks(shell: Any) -> None:
    rt: Runtime = await shell(max_background_tasks=2)
    for _ in range(2):
        await start(rt, marked_sleep(new_marker()))
    third = await rt.call("Bash", {"command": "echo never", "run_in_background": True})
    assert third.is_error and "Too many background tasks" in third.text


async def test_background_needs_the_task_tools(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(
        config={"tools": {"disabled": ["TaskStop"]}, "shell": {"timeout": 1}}, approve_asks=True
    )
    refused = await rt.call("Bash", {"command": "echo x", "run_in_background": True})
    assert refused.is_error and "not available" in refused.text
    description = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "do not set `run_in_background`" in description
    marker = new_marker()
    killed = await rt.call("Bash", {"command": marked_sleep(marker)})
    assert killed.is_error and "timeout" in killed.text  # killed, not moved
    assert not processes_with(marker)
