"""TodoList and the goal tools through the real `deftly run` binary and a scripted model
server on 127.0.0.1: the model's list in the next request and on the terminal, the list
back after `--resume` with the stale reminder when it is due, a goal's budget ending a
later run's turn with `budget`, `[loop] max_turn_tokens`; the renderers fed hand-built
events; the interactive session in a real pty."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pexpect
import pytest
from rich.console import Console

from deftly.agent.events import ToolCall, ToolResult, TurnEnded
from deftly.cli.run_live import LiveRenderer
from deftly.cli.run_render import PrintRenderer, stop_message
from deftly.contract.display import GoalStartDisplay, TodoItem, TodoListDisplay
from deftly.contract.identity import Identity
from deftly.contract.result import ToolResult as Outcome
from deftly.execution.calls import CallResult
from deftly.execution.calls import Outcome as Ran
from deftly.execution.events import ToolCallStarted
from deftly.features.todo.render import REMINDER
from deftly.providers.types import Usage
from tests.cli_run.helpers import deftly_run, json_lines, user_config, user_texts
from tests.cli_run.pty import PROMPT, spawn
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

PLAN = [
    {"title": "read the tests", "status": "done"},
    {"title": "fix parse()", "status": "in_progress"},
    {"title": "run the suite", "status": "pending"},
]
CHECKLIST = ["  ☑ read the tests", "  ▶ fix parse()", "  ☐ run the suite"]
SUMMARY = "3 items: 1 done, 1 in progress, 1 pending"
WRITE = Call("TodoList", {"todos": PLAN})
READ = Call("TodoList", {})
CREATE = Call("CreateGoal", {"objective": "Ship the parser", "completionCriterion": "tests pass"})


def tool_texts(request: dict[str, Any]) -> list[str]:
    """The tool results' texts of one recorded request."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def reminders(request: dict[str, Any]) -> list[str]:
    """The stale-list reminders a recorded request carries."""
    return [text for text in user_texts(request) if REMINDER in text]


# -- through the binary ------------------------------------------------------------------


def test_the_model_writes_its_list_the_next_request_has_it_and_stderr_shows_it(
    workspace: Path,
) -> None:
    script = [calls(WRITE), calls(READ), say("Planned.")]
    with ModelServer(script) as server:
        done = deftly_run(server, workspace, "plan the fix")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Planned.\n"
    [written] = tool_texts(server.requests[1])
    assert written.startswith(
        "Todo list updated.\nTodo list:\n"
        "  [done] read the tests\n  [in_progress] fix parse()\n  [pending] run the suite"
    )
    assert "[in_progress] fix parse()" in tool_texts(server.requests[2])[-1]
    lines = done.stderr.splitlines()
    at = lines.index(f"✓ TodoList: {SUMMARY}")
    assert lines[at + 1 : at + 4] == CHECKLIST
    assert lines[at + 4] == f"✓ TodoList: {SUMMARY}"  # the read: the same list, not again
    assert done.stderr.count("☑ read the tests") == 1


def test_json_carries_the_list_as_the_todo_list_display(workspace: Path) -> None:
    with ModelServer([calls(WRITE), say("Planned.")]) as server:
        done = deftly_run(server, workspace, "--json", "plan the fix")
    assert done.returncode == 0, done.stderr
    result = next(line for line in json_lines(done.stdout) if line["type"] == "tool_result")
    assert result["display"] == {"kind": "todo_list", "items": PLAN}
    assert "☑" not in done.stdout + done.stderr  # the checklist is for people, not for --json


def test_the_list_survives_resume_and_the_stale_reminder_comes_when_it_is_due(
    workspace: Path,
) -> None:
    with ModelServer([calls(WRITE), say("Planned.")]) as server:
        first = deftly_run(server, workspace, "--json", "plan the fix")
    assert first.returncode == 0, first.stderr
    session = json_lines(first.stdout)[-1]["session_id"]
    # The write was step 1 of 2. Resumed, request k of the new turn follows k + 1
    # finished steps: the tenth is the first ten steps after the write.
    script = [calls(READ)]
    script += [calls(Call("Glob", {"pattern": f"*.{n}"})) for n in range(8)]
    script += [say("Back on it.")]
    with ModelServer(script) as server:
        second = deftly_run(server, workspace, "--resume", session, "where were we?")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Back on it.\n"
    read = tool_texts(server.requests[1])[-1]
    assert read == (
        "Todo list:\n  [done] read the tests\n  [in_progress] fix parse()\n"
        "  [pending] run the suite"
    )
    lines = second.stderr.splitlines()
    at = lines.index(f"✓ TodoList: {SUMMARY}")
    assert lines[at + 1 : at + 4] == CHECKLIST  # a new process shows the list it read
    assert len(server.requests) == 10
    assert [len(reminders(r)) for r in server.requests[:9]] == [0] * 9
    [told] = reminders(server.requests[9])
    assert told.endswith(
        "Your todo list:\n1. [done] read the tests\n2. [in_progress] fix parse()\n"
        "3. [pending] run the suite</system>"
    )


def test_a_goal_s_turn_budget_ends_the_next_run_with_budget_and_the_model_hears_why(
    workspace: Path,
) -> None:
    script = [calls(CREATE, Call("SetGoalBudget", {"value": 1, "unit": "turns"})), say("Set.")]
    with ModelServer(script) as server:
        first = deftly_run(server, workspace, "--yes", "set a goal")
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    at = lines.index("✓ CreateGoal: Ship the parser")
    assert lines[at + 1] == "  done when: tests pass"
    assert lines[at + 2] == "✓ SetGoalBudget: Setting goal budget: 1 turns"
    assert "Goal budget set: 1 turn." in tool_texts(server.requests[1])[-1]

    with ModelServer([say("never asked")]) as server:
        second = deftly_run(server, workspace, "--continue", "--json", "go on")
    assert second.returncode == 1, second.stderr
    assert server.requests == []  # the budget was used up before the first step
    end = json_lines(second.stdout)[-1]
    assert (end["type"], end["stop_reason"], end["steps"]) == ("turn_end", "budget", 0)
    assert "1 turn of 1" in end["error"] and "blocked" in end["error"]

    with ModelServer([say("The goal is blocked: its budget ran out.")]) as server:
        third = deftly_run(server, workspace, "--continue", "what now?")
    assert third.returncode == 0, third.stderr
    told = user_texts(server.requests[0])[-1]
    assert "budget is used up (1 turn of 1)" in told and "now blocked" in told
    assert "SetGoalBudget" in told  # and how to go on
    assert "Active goal" not in told  # a blocked goal is not announced as active


def test_loop_max_turn_tokens_ends_a_turn_with_budget(workspace: Path) -> None:
    user_config("[loop]\nmax_turn_tokens = 250\n")
    script = [calls(Call("Glob", {"pattern": f"*.{n}"})) for n in range(3)]
    with ModelServer([*script, say("never asked")]) as server:
        done = deftly_run(server, workspace, "--json", "look around")
    assert done.returncode == 1, done.stderr
    end = json_lines(done.stdout)[-1]
    assert (end["stop_reason"], end["steps"]) == ("budget", 3)  # 120 tokens a step: 360
    assert "max_turn_tokens" in end["error"]
    assert len(server.requests) == 3
    with ModelServer([*script, say("never asked")]) as server:
        plain = deftly_run(server, workspace, "look around")
    assert plain.returncode == 1
    assert plain.stderr.splitlines()[-1] == (
        "deftly: the turn stopped because a budget ran out: The turn used 360 tokens, its "
        "budget of 250 ([loop] max_turn_tokens), so it was ended; run again with --continue "
        "to go on (the model is told why it stopped)"
    )  # what the person needs, not what the model is told to do
    assert "Traceback" not in plain.stderr


# -- the renderers, fed hand-built events ------------------------------------------------

A, T = "main", "t1"
ITEMS = [TodoItem(title=i["title"], status=i["status"]) for i in PLAN]


def todo_result(call_id: str, display: TodoListDisplay, *, error: bool = False) -> ToolResult:
    """A finished TodoList call as the turn yields it (its record carries the display)."""
    outcome = Outcome.error("bad") if error else Outcome.ok("Todo list updated.")
    record = CallResult(call_id, "TodoList", {}, outcome, Ran.EXECUTED, display=display)
    return ToolResult(A, T, call_id, "TodoList", error, outcome.text, call=record)


def test_print_mode_shows_a_changed_list_and_never_a_failed_one() -> None:
    activity = io.StringIO()
    show = PrintRenderer(io.StringIO(), activity)
    show(ToolCall(A, T, "c1", "TodoList", {}))
    show(todo_result("c1", TodoListDisplay(items=ITEMS)))
    show(todo_result("c2", TodoListDisplay(items=ITEMS[:1]), error=True))
    show(todo_result("c3", TodoListDisplay(items=ITEMS[:1])))
    show(todo_result("c4", TodoListDisplay(items=[])))
    assert activity.getvalue().splitlines() == [
        f"✓ TodoList: {SUMMARY}",
        *CHECKLIST,
        "✗ TodoList: 1 item: 1 done — bad",
        "✓ TodoList: 1 item: 1 done",
        "  ☑ read the tests",
        "✓ TodoList: empty",
        "  (the list is empty)",
    ]


def test_a_goal_budget_stop_tells_the_person_what_happened_not_the_model_s_orders() -> None:
    reason = (
        "The turn was stopped: the goal's budget is used up (2 turns of 2). The goal "
        '"Ship it" is now blocked. Tell the user what is done and what is left.'
    )
    end = TurnEnded(A, T, "budget", "", 0, Usage(), "s-1", error=reason)
    assert stop_message(end) == (
        "the turn stopped because a budget ran out: The turn was stopped: the goal's budget "
        "is used up (2 turns of 2); run again with --continue to go on (the model is told "
        "why it stopped)"
    )


def live_console() -> tuple[LiveRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False, color_system=None)
    return LiveRenderer(console), out


def announce(show: LiveRenderer, call_id: str, name: str, display: Any) -> None:
    show(ToolCall(A, T, call_id, name, {}))
    show.runtime_event(ToolCallStarted(call_id, name, {}, display=display, identity=Identity()))


def test_the_live_renderer_shows_the_checklist_once_and_a_new_goal() -> None:
    show, out = live_console()
    announce(show, "c1", "TodoList", TodoListDisplay(items=ITEMS))
    announce(show, "c2", "TodoList", TodoListDisplay(items=ITEMS))  # read back: unchanged
    goal = GoalStartDisplay(objective="Ship the parser", completion_criterion="tests pass")
    announce(show, "c3", "CreateGoal", goal)
    text = out.getvalue()
    assert f"● TodoList  {SUMMARY}" in text
    assert text.count("☑ read the tests") == 1
    assert "▶ fix parse()" in text and "☐ run the suite" in text
    assert "● CreateGoal  Ship the parser" in text
    assert "goal: Ship the parser" in text and "done when: tests pass" in text
    assert "runs in manual mode" in text


# -- the interactive session ---------------------------------------------------------------


def test_the_interactive_session_shows_the_checklist_and_asks_about_a_goal(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    script = [calls(WRITE), calls(CREATE), say("On it.")]
    with ModelServer(script) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("plan the fix")
        child.expect("☑ read the tests")
        child.expect("▶ fix parse")
        child.expect("☐ run the suite")
        child.expect("goal: Ship the parser")
        child.expect("done when: tests pass")
        child.expect(r"Approve CreateGoal\? \[")
        child.sendline("y")
        child.expect("On it.")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert '"objective": "Ship the parser"' in tool_texts(server.requests[2])[-1]
