"""Without the sandbox, deftly is a child subreaper: what leaves a command's session
(`setsid`) comes back to it and is stopped when the task ends, at TaskStop and at close.

(With the sandbox the PID namespace does this: tests/shell/test_sandbox_default.py.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.env import LocalEnv
from deftly.features.shell.tasks import TASK_MARK
from tests.shell.conftest import eventually, new_marker, processes_with, task_id_in


def escaping(marker: str) -> str:
    """A process that starts a session of its own, running as `marker`."""
    return f"setsid bash -c 'exec -a {marker} sleep 300'"


def exists(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize(
    "template",
    [
        "{escape} &",  # setsid cmd &
        "setsid -f bash -c 'exec -a {marker} sleep 300'",  # setsid -f
        "( {escape} & ) &",  # a double fork with setsid
        "{escape} & {escape} & echo two",  # two of them
        # an orphan whose own children stay behind when it is stopped
        "setsid bash -c '(exec -a {marker} sleep 300) & exec -a {marker} sleep 300' &",
    ],
)
async def test_what_leaves_its_session_is_stopped_when_the_command_ends(
    shell: Any, template: str
) -> None:
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    command = template.format(escape=escaping(marker), marker=marker)
    result = await rt.call("Bash", {"command": command})
    assert not result.is_error, result.text
    assert "process(es) running in the background; they were stopped" in result.text
    assert processes_with(marker) == []


async def test_task_stop_stops_a_setsid_child_of_a_background_task(shell: Any) -> None:
    rt: Runtime = await shell(sandbox="none")
    marker, main = new_marker(), new_marker()
    started = await rt.call(
        "Bash",
        {
            "command": f"{escaping(marker)} & exec -a {main} sleep 300",
            "run_in_background": True,
        },
    )
    task_id = task_id_in(started.text)
    assert await eventually(lambda: bool(processes_with(marker)) and bool(processes_with(main)))
    orphans = processes_with(marker)
    stopped = await rt.call("TaskStop", {"task_id": task_id})
    assert not stopped.is_error, stopped.text
    assert processes_with(marker) == [] and processes_with(main) == []
    # Its exit was collected: no zombie of ours is left in the process table.
    assert await eventually(lambda: not any(exists(pid) for pid in orphans))


async def test_close_stops_what_a_running_background_task_let_escape(shell: Any) -> None:
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    await rt.call(
        "Bash",
        {
            "command": f"setsid -f bash -c 'exec -a {marker} sleep 300'; sleep 300",
            "run_in_background": True,
        },
    )
    assert await eventually(lambda: bool(processes_with(marker)))
    await rt.close()
    assert processes_with(marker) == []


async def test_each_runtime_stops_only_its_own_tasks_orphans(make_runtime: Any) -> None:
    config = {"shell": {"sandbox": "none", "kill_grace": 2.0}}
    first: Runtime = await make_runtime(config=config)
    second: Runtime = await make_runtime(config=config)
    mine, theirs = new_marker(), new_marker()
    for rt, marker in ((first, mine), (second, theirs)):
        await rt.call(
            "Bash",
            {
                "command": f"setsid -f bash -c 'exec -a {marker} sleep 300'; sleep 300",
                "run_in_background": True,
            },
        )
    assert await eventually(lambda: bool(processes_with(mine)) and bool(processes_with(theirs)))
    await first.close()
    assert processes_with(mine) == []
    assert processes_with(theirs) != []
    await second.close()
    assert processes_with(theirs) == []


async def test_the_reaper_leaves_the_event_loops_own_children_alone(shell: Any) -> None:
    # asyncio's child watcher waits for its own pids; a sweep that collected them would
    # turn their exit status into 255. Unmarked orphans (someone else's) are left alone.
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    own = await asyncio.create_subprocess_exec("sh", "-c", "sleep 0.5; exit 7")
    foreign = new_marker()
    other = await asyncio.create_subprocess_exec(
        "env", "-u", TASK_MARK, "bash", "-c", f"setsid -f bash -c 'exec -a {foreign} sleep 300'"
    )
    await other.wait()
    try:
        for _ in range(3):
            result = await rt.call("Bash", {"command": f"{escaping(marker)} &"})
            assert "they were stopped" in result.text
        assert await own.wait() == 7
        assert processes_with(foreign) != []  # not a task's: not ours to stop
    finally:
        for pid in processes_with(foreign):
            os.kill(pid, 9)
    assert processes_with(marker) == []


def test_an_orphan_comes_back_to_deftly_once_it_is_a_subreaper() -> None:
    import subprocess

    assert LocalEnv().process_tree.adopt_orphans() is True
    marker = new_marker()
    subprocess.run(["bash", "-c", f"setsid -f bash -c 'exec -a {marker} sleep 30'"], check=True)
    try:
        [pid] = processes_with(marker)
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
        assert parent == os.getpid()  # not init's: ours, where a sweep can find it
    finally:
        for pid in processes_with(marker):
            os.kill(pid, 9)
            os.waitpid(pid, 0)


async def test_a_command_still_reports_its_own_exit_code(shell: Any) -> None:
    rt: Runtime = await shell(sandbox="none")
    marker = new_marker()
    result = await rt.call("Bash", {"command": f"{escaping(marker)} & exit 3"})
    assert result.is_error and "exit code 3" in result.text
    assert processes_with(marker) == []
