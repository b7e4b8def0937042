"""The task tools (TaskList, TaskOutput, TaskStop, WaitFor) and the end notices work for a
task of any kind on the session's board: a fake kind, beside real Bash commands."""

from __future__ import annotations

import asyncio
from typing import Any

from deftly import Runtime, ToolCall
from deftly.execution.events import Event, RuntimeNotice
from deftly.execution.notices import TASK_FINISHED_KIND
from deftly.session.tasks import BackgroundTask, TaskBoard, TaskEnded, TaskStatus
from tests.shell.conftest import task_id_in
from tests.tasks.fake_task import FakeTask


async def _runtime(make_runtime: Any) -> tuple[Runtime, TaskBoard]:
    rt: Runtime = await make_runtime()
    return rt, rt.service(TaskBoard)


async def test_the_fake_kind_satisfies_the_protocol(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    task = FakeTask(board, "count the sheep", rt.agent.agent_id)
    assert isinstance(task, BackgroundTask)
    assert task.id.startswith("fake-")


async def test_task_list_shows_a_fake_task_beside_a_command(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    started = await rt.call(
        "Bash", {"command": "sleep 30", "run_in_background": True, "description": "nap"}
    )
    bash_id = task_id_in(started.text)

    listed = await rt.call("TaskList", {})
    assert not listed.is_error, listed.text
    assert listed.text.startswith("background_tasks: 2 (2 running)")
    record = next(r for r in listed.text.split("---") if fake.id in r)
    assert "kind: fake" in record and "description: count the sheep" in record
    assert "status: running" in record and "running_for:" in record
    assert "command:" not in record and "exit_code" not in record
    assert "command: sleep 30" in next(r for r in listed.text.split("---") if bash_id in r)


async def test_task_list_shows_a_fake_task_that_ended_unannounced_once(
    make_runtime: Any,
) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", "someone-else")
    fake.end(TaskStatus.FAILED, "ran out of sheep")
    listed = await rt.call("TaskList", {})
    assert "[ended since you last heard" in listed.text and fake.id in listed.text
    assert "outcome: failed (ran out of sheep)" in listed.text
    assert fake.reported and board.pending_notices() == []
    again = await rt.call("TaskList", {})
    assert fake.id not in again.text  # active only, and no longer unannounced


async def test_task_output_reads_a_fake_tasks_newest_output(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    empty = await rt.call("TaskOutput", {"task_id": fake.id})
    assert "[output]\n(no output)" in empty.text

    fake.text = "".join(f"sheep {i}\n" for i in range(20_000))  # about 230 KiB
    result = await rt.call("TaskOutput", {"task_id": fake.id})
    assert not result.is_error, result.text
    assert f"task_id: {fake.id}" in result.text and "kind: fake" in result.text
    assert "[newest output: the last" in result.text  # the "more" marker
    assert result.text.endswith("sheep 19999")
    assert "sheep 0\n" not in result.text
    assert result.display is not None and result.display.task_kind == "fake"  # type: ignore[attr-defined]


async def test_task_output_block_waits_for_a_fake_task(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    reading = asyncio.ensure_future(
        rt.call("TaskOutput", {"task_id": fake.id, "block": True, "timeout": 60})
    )
    await asyncio.wait_for(fake.waited.wait(), 30)
    fake.text = "all counted\n"
    fake.end(TaskStatus.COMPLETED, "42 sheep")
    result = await asyncio.wait_for(reading, 30)
    assert "status: completed" in result.text and "outcome: completed (42 sheep)" in result.text
    assert "all counted" in result.text and "still running" not in result.text
    assert board.pending_notices() == []  # TaskOutput told the model


async def test_task_stop_stops_a_fake_task(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    result = await rt.call("TaskStop", {"task_id": fake.id})
    assert not result.is_error, result.text
    assert result.text.startswith(f"Stopped task {fake.id}.")
    assert fake.stops == ["stopped by TaskStop"]
    assert "outcome: killed (stopped by TaskStop)" in result.text
    assert board.pending_notices() == []  # the answer told the model; no notice after it

    again = await rt.call("TaskStop", {"task_id": fake.id})
    assert "had already ended; nothing was stopped" in again.text
    assert fake.stops == ["stopped by TaskStop"]


async def test_wait_for_waits_for_a_fake_task(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    other = FakeTask(board, "count the goats", rt.agent.agent_id)
    waiting = asyncio.ensure_future(
        rt.call("WaitFor", {"task_ids": [fake.id, other.id], "timeout": 60})
    )
    await asyncio.wait_for(fake.waited.wait(), 30)
    fake.end(TaskStatus.COMPLETED, "42 sheep")
    result = await asyncio.wait_for(waiting, 30)
    assert "wait_status: completed" in result.text
    ended, running = result.text.split("[still_running: 1]")
    assert "[ended: 1]" in ended and fake.id in ended and other.id in running
    assert fake.reported and not other.reported


async def test_wait_for_without_ids_waits_for_running_fake_tasks(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    waiting = asyncio.ensure_future(rt.call("WaitFor", {"timeout": 60, "mode": "all"}))
    await asyncio.wait_for(fake.waited.wait(), 30)
    fake.end(TaskStatus.COMPLETED, "done")
    result = await asyncio.wait_for(waiting, 30)
    assert "wait_status: completed" in result.text and fake.id in result.text


async def test_an_unknown_id_names_the_known_tasks_of_every_kind(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    for tool, args in (
        ("TaskOutput", {"task_id": "fake-nope"}),
        ("TaskStop", {"task_id": "fake-nope"}),
        ("WaitFor", {"task_ids": ["fake-nope"], "timeout": 1}),
    ):
        result = await rt.call(tool, args)
        assert result.is_error and "fake-nope" in result.text and fake.id in result.text


async def test_a_fake_tasks_end_rides_on_its_owners_next_result_once(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    events: list[Event] = []
    rt.subscribe(events.append)
    fake = FakeTask(board, "count the sheep", rt.agent.agent_id)
    fake.end(TaskStatus.FAILED, "ran out of sheep")

    [notice] = [e for e in events if isinstance(e, RuntimeNotice) and e.kind == "task_finished"]
    assert isinstance(notice.data, TaskEnded) and notice.data.task_id == fake.id
    assert notice.data.kind == "fake" and notice.data.status is TaskStatus.FAILED

    first = await rt.call("Bash", {"command": "true"})  # any call carries it
    note = first.note or ""
    assert f"Background task {fake.id} (count the sheep) ended: failed (ran out of sheep)" in note
    assert f'TaskOutput(task_id="{fake.id}")' in note
    second = await rt.call("Bash", {"command": "true"})
    assert fake.id not in (second.note or "")


async def test_a_fake_tasks_end_is_injected_to_its_owner_only_once(make_runtime: Any) -> None:
    rt, board = await _runtime(make_runtime)
    child = await rt.agent.spawn_child("helper")
    fake = FakeTask(board, "count the sheep", child.agent_id)
    fake.end(TaskStatus.COMPLETED, "42 sheep")

    assert [i for i in rt.agent.injections.drain() if i.kind == TASK_FINISHED_KIND] == []
    told = [i for i in child.injections.drain() if i.kind == TASK_FINISHED_KIND]
    assert len(told) == 1 and fake.id in told[0].text and "42 sheep" in told[0].text
    assert child.injections.drain() == []
    on_child = await child.run_batch([ToolCall("c1", "Bash", {"command": "true"})])
    assert fake.id not in (on_child[0].result.note or "")
