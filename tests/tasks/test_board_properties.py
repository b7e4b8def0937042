"""Property: whatever order tasks end, are reported by tools and have their notices
taken in, each ending is told at most once, only to the agent that started the task, and
never after a tool already told the model."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deftly.session.tasks import TaskBoard, TaskStatus, TextTask

OWNERS = ("main", "helper")
Step = tuple[str, int]

steps = st.lists(
    st.tuples(st.sampled_from(["start", "end", "report", "take"]), st.integers(0, 7)),
    max_size=40,
)


@given(steps)
def test_each_ending_is_told_once_to_its_owner_and_never_after_a_report(
    plan: list[Step],
) -> None:
    board = TaskBoard()
    tasks: list[TextTask] = []
    told: dict[str, int] = {}
    reported_first: set[str] = set()
    for action, n in plan:
        if action == "start":
            tasks.append(TextTask(board, "fake", f"t{len(tasks)}", owner=OWNERS[n % 2]))
        elif action == "end" and tasks:
            tasks[n % len(tasks)].finish(TaskStatus.COMPLETED)
        elif action == "report" and tasks:
            task = tasks[n % len(tasks)]
            if not task.running and task.id not in told:
                reported_first.add(task.id)
            board.mark_reported([task])
        elif action == "take":
            owner = OWNERS[n % 2]
            for notice in board.take_notices(owner):
                assert notice.owner == owner
                told[notice.task_id] = told.get(notice.task_id, 0) + 1
    for notice in board.take_notices():
        told[notice.task_id] = told.get(notice.task_id, 0) + 1
    assert all(count == 1 for count in told.values())
    assert not (reported_first & told.keys())
    ended = {t.id for t in tasks if not t.running}
    assert told.keys() | reported_first == ended
    assert all(t.reported for t in tasks if not t.running)
