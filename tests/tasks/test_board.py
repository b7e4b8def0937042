"""The task board on its own: posting, notices per owner told once, waiting, TextTask."""

from __future__ import annotations

import asyncio

import pytest

from deftly.contract.tool import CancelToken
from deftly.session.tasks import (
    BackgroundTask,
    TaskBoard,
    TaskEnded,
    TaskStatus,
    TextTask,
)


async def test_a_text_task_is_posted_and_its_end_is_told_to_its_owner_once() -> None:
    board = TaskBoard()
    heard: list[TaskEnded] = []
    board.listen(heard.append)
    task = TextTask(board, "agent", "review  the\nparser", owner="main")
    assert isinstance(task, BackgroundTask)
    assert task.id.startswith("agent-") and board.get(f" {task.id} ") is task
    assert task.description == "review the parser"
    assert board.entries(active_only=True) == [task]

    task.write("step one\n")
    task.finish(TaskStatus.COMPLETED)
    task.finish(TaskStatus.FAILED, "ignored: it already ended")
    assert task.outcome() == "completed"
    assert board.entries(active_only=True) == [] and board.entries() == [task]
    assert [n.task_id for n in heard] == [task.id]

    assert board.take_notices("someone-else") == []
    [notice] = board.take_notices("main")
    assert notice.kind == "agent" and notice.status is TaskStatus.COMPLETED
    assert f"Background task {task.id} (review the parser) ended: completed" in notice.message
    assert f'TaskOutput(task_id="{task.id}")' in notice.message
    assert task.reported and board.take_notices("main") == []


async def test_a_task_the_model_heard_of_gets_no_notice() -> None:
    board = TaskBoard()
    task = TextTask(board, "agent", "x", owner="main")
    task.reported = True
    task.finish(TaskStatus.FAILED, "boom")
    assert board.pending_notices() == []


async def test_mark_reported_drops_a_pending_notice() -> None:
    board = TaskBoard()
    task = TextTask(board, "agent", "x")
    task.finish(TaskStatus.FAILED, "boom")
    assert [n.task_id for n in board.pending_notices()] == [task.id]
    board.mark_reported([task])
    assert board.pending_notices() == [] and board.take_notices() == []


async def test_output_keeps_the_newest_text_and_says_there_is_more() -> None:
    board = TaskBoard()
    task = TextTask(board, "agent", "x", keep_chars=10)
    assert task.output(100).text == "" and not task.output(100).more
    task.write("0123456789abcdef")
    snapshot = task.output(4)
    assert snapshot.text == "cdef" and snapshot.more and snapshot.size == 16
    whole = task.output(100)
    assert whole.text == "6789abcdef" and whole.more  # the oldest was not kept


async def test_stop_asks_the_stopper_then_ends_killed() -> None:
    board = TaskBoard()
    asked: list[str] = []

    async def stopper(reason: str) -> None:
        asked.append(reason)

    task = TextTask(board, "agent", "x", stopper=stopper)
    await task.stop("stopped by TaskStop")
    assert asked == ["stopped by TaskStop"]
    assert task.status is TaskStatus.KILLED
    assert task.outcome() == "killed (stopped by TaskStop)"
    await task.stop("again")  # already ended: nothing asked
    assert asked == ["stopped by TaskStop"]


async def test_a_stopper_that_ends_the_work_its_own_way_keeps_that_ending() -> None:
    board = TaskBoard()

    async def stopper(reason: str) -> None:
        task.finish(TaskStatus.COMPLETED, "it had just finished")

    task = TextTask(board, "agent", "x", stopper=stopper)
    await task.stop("stopped")
    assert task.outcome() == "completed (it had just finished)"


async def test_wait_any_returns_at_the_first_end_or_the_cancel() -> None:
    board = TaskBoard()
    first, second = TextTask(board, "agent", "a"), TextTask(board, "agent", "b")
    waiting = asyncio.ensure_future(board.wait_any([first, second], 60))
    await asyncio.sleep(0)
    assert not waiting.done()
    second.finish(TaskStatus.COMPLETED)
    await asyncio.wait_for(waiting, 30)
    assert not await first.wait(0.01)

    cancel = CancelToken()
    waiting = asyncio.ensure_future(board.wait_any([first], 60, cancel))
    await asyncio.sleep(0)
    cancel.cancel()
    await asyncio.wait_for(waiting, 30)
    assert first.running
    await board.wait_any([second], 60)  # nothing running: at once


async def test_ids_are_unique_and_a_second_task_with_an_id_is_refused() -> None:
    board = TaskBoard()
    task = TextTask(board, "question", "q")
    board.post(task)  # again: fine

    class Impostor:
        id = task.id

    with pytest.raises(ValueError, match="already has the id"):
        board.post(Impostor())  # type: ignore[arg-type]
    assert len({board.new_id("bash") for _ in range(200)}) == 200


async def test_closing_drops_notices_and_announces_nothing_more() -> None:
    board = TaskBoard()
    heard: list[TaskEnded] = []
    board.listen(heard.append)
    task = TextTask(board, "agent", "x")
    board.close()
    task.finish(TaskStatus.KILLED, "the runtime closed")
    assert heard == [] and board.pending_notices() == [] and board.entries() == []


async def test_finished_and_reported_tasks_are_pruned_beyond_the_limit() -> None:
    board = TaskBoard()
    tasks = [TextTask(board, "agent", str(i)) for i in range(205)]
    for task in tasks:
        task.reported = True
        task.finish(TaskStatus.COMPLETED)
    assert len(board.entries()) == 200
    assert board.get(tasks[0].id) is None and board.get(tasks[-1].id) is tasks[-1]


async def test_a_text_task_may_end_with_its_own_message() -> None:
    board = TaskBoard()
    task = TextTask(board, "question", "Which DB?", owner="main")
    task.finish(TaskStatus.COMPLETED, message="The user answered: Postgres")
    [notice] = board.take_notices("main")
    assert notice.message == "The user answered: Postgres"
    assert notice.kind == "question" and notice.status is TaskStatus.COMPLETED
