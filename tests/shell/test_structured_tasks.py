"""Structured results of TaskList, TaskOutput and WaitFor, with real background commands
(and a task of another kind), each validated against the schema the runtime publishes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from deftly import Runtime
from deftly.execution import CallResult
from deftly.session.tasks import TaskBoard, TaskStatus
from tests.shell.conftest import task_id_in
from tests.tasks.fake_task import FakeTask


def structured(rt: Runtime, result: CallResult) -> Mapping[str, Any]:
    """The result's structured content, checked against the tool's published schema."""
    assert not result.is_error, result.text
    info = next(i for i in rt.tools() if i.name == result.name)
    schema = info.to_json()["output_schema"]
    assert isinstance(schema, dict) and schema["type"] == "object"
    Draft202012Validator.check_schema(schema)
    data = result.result.structured
    assert data is not None, f"{result.name} gave no structured content"
    errors = list(Draft202012Validator(schema).iter_errors(dict(data)))
    assert not errors, [e.message for e in errors]
    return data


async def background(rt: Runtime, command: str) -> str:
    started = await rt.call("Bash", {"command": command, "run_in_background": True})
    assert not started.is_error, started.text
    return task_id_in(started.text)


async def test_task_list_records_every_kind(shell: Any) -> None:
    rt: Runtime = await shell()
    board = rt.service(TaskBoard)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    bash_id = await background(rt, "sleep 30")
    gone = FakeTask(board, "left early", "someone-else")
    gone.end(TaskStatus.FAILED, "ran out of sheep")

    data = structured(rt, await rt.call("TaskList", {}))
    by_id = {t["id"]: t for t in data["tasks"]}
    assert set(by_id) == {bash_id, fake.id} and data["running"] == 2
    assert by_id[bash_id]["kind"] == "bash" and by_id[bash_id]["command"] == "sleep 30"
    assert by_id[bash_id]["status"] == "running" and by_id[bash_id]["exit_code"] is None
    assert by_id[fake.id]["command"] is None and by_id[fake.id]["ended_at"] is None
    assert by_id[fake.id]["description"] == "count the sheep"
    (ended,) = data["ended_unannounced"]
    assert ended["id"] == gone.id and ended["status"] == "failed"
    assert ended["outcome"] == "failed (ran out of sheep)" and ended["ended_at"] is not None

    again = structured(rt, await rt.call("TaskList", {}))
    assert again["ended_unannounced"] == []  # told once, in the data as in the text
    await rt.call("TaskStop", {"task_id": bash_id})


async def test_task_output_of_a_finished_command(shell: Any) -> None:
    rt: Runtime = await shell(preview_bytes=1024)
    task_id = await background(rt, "head -c 5000 /dev/zero | tr '\\0' a; echo; exit 3")
    result = await rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 60})
    data = structured(rt, result)
    task = data["task"]
    assert task["id"] == task_id and task["status"] == "failed" and task["exit_code"] == 3
    assert task["output_bytes"] == 5001 and task["output_path"] is not None
    assert data["truncated"] is True and data["still_running"] is False
    assert set(data["output"]) == {"a"} and 0 < len(data["output"]) <= 1024
    assert data["output"] in result.text and task["output_path"] in result.text


async def test_task_output_while_it_still_runs(shell: Any) -> None:
    rt: Runtime = await shell()
    task_id = await background(rt, "echo started; sleep 30")
    result = await rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 1})
    data = structured(rt, result)
    assert data["still_running"] is True and data["task"]["status"] == "running"
    await rt.call("TaskStop", {"task_id": task_id})


async def test_wait_for_says_which_ended_and_which_still_run(shell: Any) -> None:
    rt: Runtime = await shell()
    quick = await background(rt, "echo done")
    slow = await background(rt, "sleep 30")
    args = {"task_ids": [quick, slow], "timeout": 60, "mode": "any"}
    data = structured(rt, await rt.call("WaitFor", args))
    assert data["status"] == "completed"
    assert [t["id"] for t in data["ended"]] == [quick]
    assert data["ended"][0]["exit_code"] == 0 and data["ended"][0]["status"] == "completed"
    assert [t["id"] for t in data["still_running"]] == [slow]

    timed = structured(rt, await rt.call("WaitFor", {"task_ids": [slow], "timeout": 1}))
    assert timed["status"] == "timed_out" and timed["waited_seconds"] >= 1
    assert timed["ended"] == [] and [t["id"] for t in timed["still_running"]] == [slow]
    await rt.call("TaskStop", {"task_id": slow})
    nothing = structured(rt, await rt.call("WaitFor", {"timeout": 5}))
    assert nothing == {
        "status": "no_tasks",
        "waited_seconds": 0.0,
        "ended": [],
        "still_running": [],
    }


async def test_a_failed_task_call_carries_no_structured_content(shell: Any) -> None:
    rt: Runtime = await shell()
    for name, args in [
        ("TaskOutput", {"task_id": "bash-nothere"}),
        ("WaitFor", {"task_ids": ["bash-nothere"], "timeout": 1}),
    ]:
        result = await rt.call(name, args)
        assert result.is_error and result.result.structured is None, name
