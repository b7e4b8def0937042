"""What a compacted history keeps of the session's state: through a real `Agent` against
the scripted server, a small configured window forces a compaction, and the message the
compacted history starts with carries the todo list and the unfinished goal as they are
at that moment ("Session state: ..."), and nothing when there is no such state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.features import BUILTIN_FEATURES
from deftly.features.goals.service import GoalService
from deftly.features.todo.state import TodoBook, TodoEntry
from deftly.providers import Usage
from deftly.session.turns import LoopHooks
from tests.agent.context.test_e2e import SUMMARY, is_summary_request, scripted
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.goals.helpers import play_turns
from tests.scripted.script import Call, Step, calls, say
from tests.scripted.server import ModelServer

PLAN = [
    {"title": "read a.txt", "status": "done"},
    {"title": "read b.txt", "status": "in_progress"},
    {"title": "write the report", "status": "pending"},
]
GOAL = Call("CreateGoal", {"objective": "Report on a and b", "completionCriterion": "report.md"})
TASK = "read a and b, then report"


def head_text(request: dict[str, Any]) -> str:
    """The first user message of a recorded request: after a compaction, the task and the
    `<system>` block with the summary and the session state."""
    first = next(m for m in request["messages"] if m["role"] == "user")
    return content_text(first)


def growing(*first: Call) -> list[Step]:
    """`first` calls, then two Reads, the prompt growing past a 10,000-token window's
    compaction point before the fourth request (the server's reported usage)."""
    return [
        calls(*first, usage=(2_000, 20)),
        calls(Call("Read", {"path": "a.txt"}), usage=(4_000, 20)),
        calls(Call("Read", {"path": "b.txt"}), usage=(9_000, 20)),
        say("Both read."),
    ]


async def compacted_turn(make_runtime: Any, workspace: Path, steps: list[Step]) -> Any:
    """Run one turn of `steps` in a 10,000-token window; the request after the compaction."""
    for name in "ab":
        (workspace / f"{name}.txt").write_text(f"contents of {name}\n")
    runtime = await make_runtime(
        features=list(BUILTIN_FEATURES), config={"loop": {"keep_recent_steps": 1}}
    )
    with ModelServer(scripted(steps)) as server:
        agent = Agent(runtime, openai_provider(server), context_window=10_000)
        turn = await run_turn(agent, TASK)
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end.error
    (changed,) = turn.of(ev.ContextChanged)
    assert changed.kind == "compacted"
    after = server.requests[-1]
    assert not is_summary_request(after)
    head = head_text(after)
    assert head.startswith(TASK) and SUMMARY in head  # a compacted history's head
    return head


async def test_the_compacted_history_keeps_the_todo_list_and_the_goal(
    make_runtime: Any, workspace: Path
) -> None:
    steps = growing(Call("TodoList", {"todos": PLAN}), GOAL)
    head = await compacted_turn(make_runtime, workspace, steps)
    state = head.split("Session state: ", 1)[1]
    assert state.startswith(
        "Your todo list (TodoList):\n"
        "  [done] read a.txt\n"
        "  [in_progress] read b.txt\n"
        "  [pending] write the report\n\n"
    )
    assert "Goal (active): Report on a and b\nDone when: report.md\n" in state
    assert "So far: 0 turns" in state  # the running turn is not finished yet
    assert state.endswith("</system>")


async def test_the_state_is_the_list_as_it_is_when_the_compaction_runs(
    make_runtime: Any, workspace: Path
) -> None:
    later = [{"title": "read b.txt", "status": "done"}]
    steps = growing(Call("TodoList", {"todos": PLAN}))
    steps[1] = calls(
        Call("Read", {"path": "a.txt"}), Call("TodoList", {"todos": later}), usage=(4_000, 20)
    )
    head = await compacted_turn(make_runtime, workspace, steps)
    assert "Session state: Your todo list (TodoList):\n  [done] read b.txt</system>" in head
    assert "write the report" not in head and "Goal (" not in head


async def test_no_list_and_no_goal_leave_no_session_state(
    make_runtime: Any, workspace: Path
) -> None:
    steps = growing(Call("TodoList", {"todos": PLAN}))
    steps[1] = calls(
        Call("Read", {"path": "a.txt"}), Call("TodoList", {"todos": []}), usage=(4_000, 20)
    )
    head = await compacted_turn(make_runtime, workspace, steps)
    assert "Session state" not in head and "todo" not in head.lower()


async def test_a_blocked_goal_is_kept_with_why_and_a_completed_one_is_not(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime(features=list(BUILTIN_FEATURES))
    hooks = runtime.agent.services.find(LoopHooks)
    goals = runtime.agent.services.find(GoalService)
    book = runtime.agent.services.find(TodoBook)
    assert hooks is not None and goals is not None and book is not None
    assert hooks.state_text() is None  # nothing yet
    goals.create("Ship the parser", "tests pass")
    await runtime.call("SetGoalBudget", {"value": 2, "unit": "turns"})
    play_turns(goals, 2)
    assert hooks.exceeded(steps=0, usage=Usage(), seconds=0.0) is not None
    book.replace([TodoEntry(title="fix parse", status="in_progress")])
    assert hooks.state_text() == (
        "Your todo list (TodoList):\n  [in_progress] fix parse\n\n"
        "Goal (blocked): Ship the parser\n"
        "Done when: tests pass\n"
        "So far: 2 turns, 240 tokens, 4s.\n"
        "Budget left: 0 turns.\n"
        "Why it is blocked: budget reached (2 turns of 2)."
    )
    goals.set_status("complete", "completed")
    book.replace([])
    assert hooks.state_text() is None
