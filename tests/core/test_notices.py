"""A background task's ending reaches the model on its next call, whatever the call, and a
library host hears it as a `RuntimeNotice` event; `deftly batch` shows it in --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.execution import Event, RuntimeNotice
from tests.conftest import subprocess_env
from tests.shell.conftest import task_id_in, tasks_of

DEFTLY = str(Path(sys.executable).with_name("deftly"))


async def test_the_next_result_of_any_call_carries_the_notice(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    rt: Runtime = await make_runtime()
    events: list[Event] = []
    rt.subscribe(events.append)
    started = await rt.call(
        "Bash",
        {"command": "echo done; exit 3", "run_in_background": True, "description": "quick"},
    )
    task_id = task_id_in(started.text)
    task = tasks_of(rt).get(task_id)
    assert task is not None and await task.wait(20)  # ended; nobody has told the model

    notices = [e for e in events if isinstance(e, RuntimeNotice) and e.kind == "task_finished"]
    assert [n.data.task_id for n in notices] == [task_id]
    assert notices[0].data.exit_code == 3

    [read] = await rt.run_batch([{"id": "r1", "name": "Read", "arguments": {"path": "a.txt"}}])
    assert not read.is_error and "hello" in read.text
    assert read.note is not None
    assert f"Background task {task_id} (quick) ended: failed (exit code 3)" in read.note
    assert f'TaskOutput(task_id="{task_id}")' in read.note
    assert task_id not in read.text  # the output itself is untouched

    again = await rt.call("Read", {"path": "a.txt"})  # each notice is given out once
    assert again.note is None or task_id not in again.note


async def test_a_task_the_model_already_heard_about_is_not_announced(
    make_runtime: Any,
) -> None:
    rt: Runtime = await make_runtime()
    started = await rt.call("Bash", {"command": "true", "run_in_background": True})
    task_id = task_id_in(started.text)
    waited = await rt.call("WaitFor", {"task_ids": [task_id], "timeout": 30})
    assert "completed" in waited.text
    after = await rt.call("TaskList", {})
    assert after.note is None or task_id not in after.note


def test_deftly_batch_shows_the_notice_in_the_next_calls_note(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    waiting = "until [ -e go ]; do sleep 0.02; done; echo went; exit 3"
    lines = [
        {"id": "1", "name": "Bash", "arguments": {"command": waiting, "run_in_background": True}},
        # the task waits for `go`, so WaitFor times out and reports it still running
        {"id": "2", "name": "WaitFor", "arguments": {"timeout": 1}},
        {"id": "3", "name": "Bash", "arguments": {"command": "touch go; sleep 2"}},
        {"id": "4", "name": "Read", "arguments": {"path": "a.txt"}},
    ]
    done = _batch(workspace, lines)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["tool_call_id"] for row in rows] == ["1", "2", "3", "4"], done.stderr
    task_id = task_id_in(rows[0]["output"])
    assert "timed_out" in rows[1]["output"] and "status: running" in rows[1]["output"]
    notes = [row["note"] or "" for row in rows]
    carrying = [i for i, note in enumerate(notes) if f"Background task {task_id}" in note]
    assert len(carrying) == 1 and carrying[0] >= 2, notes  # once, after it ended
    assert "failed (exit code 3)" in notes[carrying[0]]


def _batch(workspace: Path, lines: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, "batch", "-", "-w", str(workspace), "--yes", "--json"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
