"""The reference's acceptance cases for the state tools (TodoList, the goal tools,
NotifyUser, the cron tools, AskUserQuestion) through the real `deftly run` binary.

One `deftly run --watch --json --yes` process does most of them: a scripted model calls
the tools case by case, one call per step, over eight turns (the prompt's, then one per
fire of a cron job the model itself schedules, the clock moved by the test). After the run
each case is checked in the recorded requests: the request after a call carries its result
(our wording), and where the case says so the state the loop injects (the goal at a turn's
start, the stale-list reminder, the `<cron-fire>` message, why a budget stopped a turn).

A plain print-mode run shows AskUserQuestion and the cron tools are not offered where
nobody answers and nothing runs the prompts; an interactive session in a pty refuses
repeated questions and answers questions that share a label.

Not here (no sub-agent can be made to call a tool through the binary yet): goal and cron
tools refused on a non-main agent — `tests/goals` and `tests/cron` cover them.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest

from deftly.features.todo.render import REMINDER
from tests.cli_run.acceptance_moves import (
    ABSENT_ID,
    ULID,
    Move,
    Sequencer,
    Turn,
    created_job_id,
    fresh_user_texts,
    offered,
    tool_result,
)
from tests.cli_run.helpers import deftly_run
from tests.cli_run.pty import PROMPT, spawn
from tests.cli_run.test_interactive_inbox import START, FileClock
from tests.cli_run.test_watch import Watcher
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

CRON_TOOLS = {"CronCreate", "CronList", "CronDelete"}
STATE_TOOLS = {"TodoList", "CreateGoal", "GetGoal", "UpdateGoal", "SetGoalBudget", "NotifyUser"}
DRIVER_PROMPT = 'check "the" build & more\nsecond line'
"""The prompt of the job whose fires start turns 2 to 8 (quotes, an ampersand, a newline:
the `<cron-fire>` body keeps them verbatim)."""
CONFIG = "[cron]\npoll_interval = 0.05\nno_jitter = true\nmax_jobs = 2\n"
"""The scheduler looks often, fires at ideal times, and two jobs reach the cap."""


def todo(*items: tuple[str, str]) -> Call:
    return Call("TodoList", {"todos": [{"title": t, "status": s} for t, s in items]})


def budget(value: float, unit: str) -> Call:
    return Call("SetGoalBudget", {"value": value, "unit": unit})


def update(status: str) -> Call:
    return Call("UpdateGoal", {"status": status})


def delete_the_first_job(body: dict[str, Any]) -> Call:
    """CronDelete of the job `cron-create` made (its id read from that result)."""
    return Call("CronDelete", {"id": created_job_id(body, "cron-create")})


NEXT_FIVE = "2026-01-01T00:05:00.000+00:00"
"""The first */5 match after the start (00:00:30 UTC; the run's TZ is UTC)."""

TURNS = [
    Turn(
        "prompt",
        [
            Move("todo-read-empty", Call("TodoList", {}), exact="The todo list is empty."),
            Move(
                "todo-write",
                todo(("first", "pending"), ("second", "in_progress")),
                told=(
                    "Todo list updated.\nTodo list:\n  [pending] first\n  [in_progress] second",
                    "keep exactly one item in_progress",
                ),
            ),
            Move(
                "todo-read",
                Call("TodoList", {}),
                exact="Todo list:\n  [pending] first\n  [in_progress] second",
            ),
            Move("todo-clear", Call("TodoList", {"todos": []}), exact="Todo list cleared."),
            Move("todo-write-done", todo(("shipped", "done")), told=("Todo list updated.",)),
            Move("todo-read-done", Call("TodoList", {}), told=("[done] shipped",)),
            Move(
                "todo-invalid-status",
                todo(("x", "wip")),
                told=("TodoList", "'wip'", "'pending', 'in_progress' or 'done'"),
                error=True,
            ),
            Move("goal-get-none", Call("GetGoal", {}), exact='{\n  "goal": null\n}'),
            Move(
                "budget-no-goal", budget(20, "turns"), exact="Goal budget not set: no current goal."
            ),
            Move(
                "complete-no-goal", update("complete"), exact="Goal not completed: no active goal."
            ),
            Move("block-no-goal", update("blocked"), exact="Goal not blocked: no active goal."),
            Move("resume-no-goal", update("active"), exact="Goal not resumed: no current goal."),
            Move(
                "update-paused",
                update("paused"),
                told=("UpdateGoal", "'paused'", "'active', 'complete' or 'blocked'"),
                error=True,
            ),
            Move(
                "notify",
                Call("NotifyUser", {"message": "Half the cases are through.", "title": "Cases"}),
                told=("The person was notified", "a notice event in the --json output"),
            ),
            Move(
                "cron-list-empty",
                Call("CronList", {}),
                exact="cron_jobs: 0\nNo cron jobs scheduled.",
            ),
            Move(
                "cron-invalid",
                Call("CronCreate", {"cron": "not a cron", "prompt": "ping"}),
                told=("The cron expression cannot be used", "exactly 5 fields", "has 3"),
                error=True,
            ),
            Move(
                "cron-never-fires",
                Call("CronCreate", {"cron": "0 0 31 2 *", "prompt": "ping"}),
                told=('"0 0 31 2 *" never matches within the next 5 years',),
                error=True,
            ),
            Move(
                "cron-prompt-too-long",
                Call("CronCreate", {"cron": "* * * * *", "prompt": "你" * 3000}),
                told=("The prompt is 9000 bytes in UTF-8, more than the 8192",),
                error=True,
            ),
            Move(
                "cron-create",
                Call("CronCreate", {"cron": "  */5\n*\t*\t*\t*  ", "prompt": "hi"}),
                pattern=(
                    f"id: {ULID}\ncron: \\*/5 \\* \\* \\* \\*\nhumanSchedule: every 5 minutes\n"
                    f"recurring: true\nnextFireAt: {re.escape(NEXT_FIVE)}"
                ),
            ),
            Move(
                "cron-list-one",
                Call("CronList", {}),
                pattern=(
                    f"cron_jobs: 1\nid: {ULID}\ncron: \\*/5 \\* \\* \\* \\*\n"
                    f'humanSchedule: every 5 minutes\nprompt: "hi"\n'
                    f"nextFireAt: {re.escape(NEXT_FIVE)}\nrecurring: true\nageDays: 0\\.00\n"
                    "stale: false"
                ),
            ),
            Move(
                "cron-create-driver",
                Call("CronCreate", {"cron": "* * * * *", "prompt": DRIVER_PROMPT}),
                told=(
                    "cron: * * * * *\nhumanSchedule: every minute\nrecurring: true\n"
                    "nextFireAt: 2026-01-01T00:01:00.000+00:00",
                ),
            ),
            Move(
                "cron-cap",
                Call("CronCreate", {"cron": "0 9 * * *", "prompt": "one too many"}),
                told=("already holds 2 cron jobs", "CronDelete"),
                error=True,
            ),
            Move(
                "cron-delete-bad-id",
                Call("CronDelete", {"id": "xyz"}),
                told=('"xyz" is not a cron job id', "ULIDs"),
                error=True,
            ),
            Move(
                "cron-delete-absent",
                Call("CronDelete", {"id": ABSENT_ID}),
                told=(f"There is no cron job with the id {ABSENT_ID}",),
                error=True,
            ),
            Move(
                "cron-delete-present",
                delete_the_first_job,
                pattern=f"Deleted cron job {ULID}: it will not fire again\\.",
            ),
            Move("prompt-done", text="The first batch of cases is done."),
        ],
        end="end_turn",
    ),
    Turn(
        "first-fire",
        [
            Move(
                "goal-create",
                Call(
                    "CreateGoal",
                    {"objective": "Ship the parser", "completionCriterion": "tests pass"},
                ),
                told=('"objective": "Ship the parser"', '"status": "active"'),
            ),
            Move(
                "budget-half-second",
                budget(0.5, "seconds"),
                told=("Goal budget not set: 0.5 seconds is not a reasonable goal budget.",),
            ),
            Move(
                "budget-25-hours",
                budget(25, "hours"),
                told=("Goal budget not set: 25 hours is not a reasonable goal budget.",),
            ),
            Move("budget-1-4-turns", budget(1.4, "turns"), exact="Goal budget set: 1 turn."),
            Move("budget-5-turns", budget(5, "turns"), exact="Goal budget set: 5 turns."),
            Move(
                "goal-complete",
                update("complete"),
                told=(
                    "Goal completed successfully.",
                    "Worked 1 turn",
                    "Write a concise final message for the user",
                ),
            ),
        ],
        end="stop_turn",
        opening=(
            'cron="* * * * *" recurring="true" coalescedCount="1" stale="false">\n'
            f"<prompt>\n{DRIVER_PROMPT}\n</prompt>\n</cron-fire>",
        ),
        not_opening=("Active goal",),
    ),
    Turn(
        "second-fire",
        [
            Move(
                "goal-create-again",
                Call("CreateGoal", {"objective": "Fix the flaky test"}),
                told=('"objective": "Fix the flaky test"',),
            ),
            Move("goal-blocked", update("blocked"), told=("Goal blocked.", "concrete blocker")),
        ],
        end="stop_turn",
        opening=("<cron-fire",),
        not_opening=("Active goal",),  # a completed goal is not announced
    ),
    Turn(
        "third-fire",
        [
            Move("goal-resume", update("active"), exact="Goal resumed."),
            Move("budget-3-turns", budget(3, "turns"), exact="Goal budget set: 3 turns."),
            Move("resumed", text="Back on the flaky test."),
        ],
        end="end_turn",
        opening=("<cron-fire",),
        not_opening=("Active goal",),  # nor a blocked one
    ),
    Turn(
        "fourth-fire",
        [
            Move(
                "budget-already-reached",
                budget(2, "turns"),
                told=(
                    "Goal budget set: 2 turns.",
                    "already reached this budget and will stop now; it is blocked.",
                ),
                then=Call("NotifyUser", {"message": "never sent"}),
            ),
        ],
        end="stop_turn",
        opening=("Active goal: Fix the flaky test", "So far: 2 turns", "Budget left: 1 turn."),
    ),
    Turn(
        "fifth-fire",
        [
            Move(
                "resume-over-budget",
                update("active"),
                told=("Goal not resumed: it has used up its budget", "SetGoalBudget"),
            ),
            Move("budget-4-turns", budget(4, "turns"), exact="Goal budget set: 4 turns."),
            Move("goal-resume-again", update("active"), exact="Goal resumed."),
            Move("resumed-again", text="Back on it once more."),
        ],
        end="end_turn",
        opening=("<cron-fire",),
        not_opening=("Active goal",),
    ),
    Turn("sixth-fire", [], end="budget"),  # 4 turns of 4 used: it stops before a step
    Turn(
        "seventh-fire",
        [
            Move(
                "goal-get-blocked",
                Call("GetGoal", {}),
                told=('"status": "blocked"', '"turnsUsed": 4', '"overBudget": true'),
            ),
            Move("blocked-told", text="The flaky-test goal is blocked: its budget ran out."),
        ],
        end="end_turn",
        opening=(
            "The turn was stopped: the goal's budget is used up (4 turns of 4)",
            'The goal "Fix the flaky test" is now blocked.',
        ),
        not_opening=("Active goal",),
    ),
]
MOVES = [move for turn in TURNS for move in turn.moves]
CALLS = [move for move in MOVES if move.call is not None]


def turn_openings() -> list[tuple[Turn, int]]:
    """Each turn with moves, and the index of its first request."""
    found, at = [], 0
    for turn in TURNS:
        if turn.moves:
            found.append((turn, at))
        at += len(turn.moves)
    return found


@dataclass(frozen=True)
class WatchedRun:
    """What the watched run left: the model's requests, the --json events, the exit."""

    requests: list[dict[str, Any]]
    events: list[dict[str, Any]]
    status: int
    stderr: str

    def after(self, name: str) -> dict[str, Any]:
        """The request that follows the move `name`."""
        index = [move.name for move in MOVES].index(name)
        return self.requests[index + 1]


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WatchedRun]:
    """The one `deftly run --watch` of the table, on its own homes and cron clock."""
    root = tmp_path_factory.mktemp("acceptance")
    workspace = root / "ws"
    workspace.mkdir()
    config = root / "config" / "deftly" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)
    clock = FileClock(root / "cron-clock", START)
    env = {
        "DEFTLY_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "DEFTLY_CRON_CLOCK": f"file:{clock.path}",
        "TZ": "UTC",
    }
    with ModelServer(Sequencer(MOVES)) as server:
        args = ["run", "--watch", "--json", "--yes", "work through the cases"]
        args += ["-w", str(workspace), "--base-url", server.openai_url, "--model", "scripted"]
        watcher = Watcher(args, root / "stderr.txt", **env)
        try:
            for number, _ in enumerate(TURNS):
                if number:
                    clock.advance(60)  # the driver job fires: the next turn
                watcher.expect_event("turn_end")
            status = watcher.stop(signal.SIGTERM)
            stderr = watcher.stderr
        finally:
            watcher.close()
    events = [json.loads(line) for line in watcher.seen]
    yield WatchedRun(list(server.requests), events, status, stderr)


def test_the_run_took_one_request_per_move_and_ended_cleanly(watched: WatchedRun) -> None:
    assert watched.status == 0, watched.stderr
    assert len(watched.requests) == len(MOVES)
    assert "Traceback" not in watched.stderr


@pytest.mark.parametrize("move", CALLS, ids=[move.name for move in CALLS])
def test_the_next_request_carries_the_result(watched: WatchedRun, move: Move) -> None:
    text, error = tool_result(watched.after(move.name), move.name)
    assert error == move.error, text
    if move.exact is not None:
        assert text == move.exact
    if move.pattern is not None:
        assert re.fullmatch(move.pattern, text), text
    for part in move.told:
        assert part in text


THEN = [move for move in CALLS if move.then is not None]


@pytest.mark.parametrize("move", THEN, ids=[move.name for move in THEN])
def test_a_call_that_ends_the_batch_cuts_off_the_calls_after_it(
    watched: WatchedRun, move: Move
) -> None:
    assert move.call is not None and not callable(move.call)
    text, error = tool_result(watched.after(move.name), f"{move.name}-then")
    assert error
    assert text.startswith(f'Skipped: the earlier call to "{move.call.name}" ended this batch')


@pytest.mark.parametrize("turn", TURNS, ids=[turn.name for turn in TURNS])
def test_each_turn_ends_as_the_loop_ends_it(watched: WatchedRun, turn: Turn) -> None:
    ends = [event for event in watched.events if event["type"] == "turn_end"]
    assert len(ends) == len(TURNS)
    end = ends[TURNS.index(turn)]
    assert end["stop_reason"] == turn.end, end
    assert end["steps"] == len(turn.moves)


def test_the_budget_turn_is_stopped_before_its_first_step_and_says_why(
    watched: WatchedRun,
) -> None:
    [end] = [e for e in watched.events if e["type"] == "turn_end" and e["stop_reason"] == "budget"]
    assert "4 turns of 4" in end["error"] and "blocked" in end["error"]


OPENINGS = turn_openings()


@pytest.mark.parametrize(("turn", "index"), OPENINGS, ids=[turn.name for turn, _ in OPENINGS])
def test_a_turn_s_first_request_carries_the_injected_state(
    watched: WatchedRun, turn: Turn, index: int
) -> None:
    fresh = "\n".join(fresh_user_texts(watched.requests[index]))
    for part in turn.opening:
        assert part in fresh
    for part in turn.not_opening:
        assert part not in fresh


def test_a_fired_turn_s_prompt_is_the_cron_fire_envelope_of_the_driver_job(
    watched: WatchedRun,
) -> None:
    driver = created_job_id(watched.after("cron-create-driver"), "cron-create-driver")
    [(_, first_fire)] = [(t, i) for t, i in OPENINGS if t.name == "first-fire"]
    assert fresh_user_texts(watched.requests[first_fire])[-1] == (
        f'<cron-fire jobId="{driver}" cron="* * * * *" recurring="true" coalescedCount="1" '
        f'stale="false">\n<prompt>\n{DRIVER_PROMPT}\n</prompt>\n</cron-fire>'
    )
    starts = [event for event in watched.events if event["type"] == "turn_start"]
    assert [s.get("origin", {}).get("kind") for s in starts] == [None] + ["cron_job"] * 7


def test_the_job_deleted_is_the_one_created(watched: WatchedRun) -> None:
    created = created_job_id(watched.after("cron-create"), "cron-create")
    [call] = [
        c
        for m in watched.after("cron-delete-present")["messages"]
        for c in m.get("tool_calls") or []
        if c["id"] == "cron-delete-present"
    ]
    assert json.loads(call["function"]["arguments"]) == {"id": created}


def test_the_stale_list_reminder_comes_ten_steps_after_the_last_write_and_every_ten_after(
    watched: WatchedRun,
) -> None:
    names = [move.name for move in MOVES]
    last_write = names.index("todo-write-done")  # the invalid write after it changed nothing
    due = set(range(last_write + 11, len(MOVES), 10))
    carrying = {
        index
        for index, request in enumerate(watched.requests)
        if any(REMINDER in text for text in fresh_user_texts(request))
    }
    assert carrying == due
    [first] = [t for t in fresh_user_texts(watched.requests[min(due)]) if REMINDER in t]
    assert first.endswith("Your todo list:\n1. [done] shipped</system>")


def test_notify_user_s_message_is_a_notice_event(watched: WatchedRun) -> None:
    notices = [e for e in watched.events if e["type"] == "notice" and e["kind"] == "notify"]
    # and only it: the NotifyUser a batch-ending call cut off was never sent
    assert [n["text"] for n in notices] == ["Cases: Half the cases are through."]


def test_every_request_offers_the_state_and_cron_tools_and_no_question_tool(
    watched: WatchedRun,
) -> None:
    for request in watched.requests:
        tools = offered(request)
        assert tools >= STATE_TOOLS | CRON_TOOLS
        assert "AskUserQuestion" not in tools  # nobody answers a --watch run


# -- print mode: nobody to ask, nothing runs scheduled prompts ---------------------------------

ASK = {
    "questions": [
        {"question": "Which DB?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}
    ]
}


def test_print_mode_offers_no_question_or_cron_tool_and_notify_says_stderr(
    workspace: Path,
) -> None:
    script = [
        calls(Call("AskUserQuestion", ASK, id="ask")),
        calls(Call("CronList", {}, id="cron")),
        calls(Call("NotifyUser", {"message": "Tests pass."}, id="notify")),
        say("Done."),
    ]
    with ModelServer(script) as server:
        done = deftly_run(server, workspace, "ask me, then tell me")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    for request in server.requests:
        tools = offered(request)
        assert "NotifyUser" in tools and "TodoList" in tools
        assert not ({"AskUserQuestion"} | CRON_TOOLS) & tools
    asked, error = tool_result(server.requests[1], "ask")
    assert error and 'Tool "AskUserQuestion" is not available: nobody can answer' in asked
    listed, error = tool_result(server.requests[2], "cron")
    assert error and "nothing here runs the prompts it schedules" in listed
    told, error = tool_result(server.requests[3], "notify")
    assert not error and "The person was notified: a line on stderr." in told
    assert "🔔 Tests pass." in done.stderr.splitlines()


# -- the interactive session: a person answers -------------------------------------------------

ENTER = "\r"
TWICE = {
    "questions": [
        {"question": "Which DB?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
        {"question": "Which DB?", "options": [{"label": "MySQL"}, {"label": "SQLite"}]},
    ]
}
REPEATED_LABEL = {
    "questions": [
        {"question": "Which DB?", "options": [{"label": "Postgres"}, {"label": "Postgres"}]}
    ]
}
SHARED_LABEL = {
    "questions": [
        {
            "question": "Which DB in production?",
            "options": [{"label": "Postgres"}, {"label": "MySQL"}],
        },
        {"question": "Which DB in tests?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
    ]
}


def test_repeated_questions_are_refused_and_a_label_shared_across_questions_is_answered(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    script = [
        calls(Call("AskUserQuestion", TWICE, id="twice")),
        calls(Call("AskUserQuestion", REPEATED_LABEL, id="repeated")),
        calls(Call("AskUserQuestion", SHARED_LABEL, id="shared")),
        say("Postgres everywhere."),
    ]
    with ModelServer(script) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("pick the databases")
        child.expect("Which DB in production")  # the refused ones were never shown
        child.expect("Esc dismisses")
        child.send(ENTER)
        child.expect("Which DB in tests")
        child.expect("Esc dismisses")
        child.send(ENTER)
        child.expect("Postgres everywhere.")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert "AskUserQuestion" in offered(server.requests[0])
    twice, error = tool_result(server.requests[1], "twice")
    assert error and '"Which DB?" is asked more than once' in twice
    repeated, error = tool_result(server.requests[2], "repeated")
    assert error and '"Which DB?" offers "Postgres" more than once' in repeated
    shared, error = tool_result(server.requests[3], "shared")
    assert not error
    assert json.loads(shared) == {
        "answers": {"Which DB in production?": "Postgres", "Which DB in tests?": "Postgres"}
    }
