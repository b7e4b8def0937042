"""Budget units, the formats the model reads, and the wall-clock budget as the loop asks it."""

from __future__ import annotations

from typing import Any

from deftly.features.goals.budget import parse_budget
from deftly.features.goals.state import format_elapsed, format_tokens
from deftly.providers import Usage
from deftly.session.turns import TurnEnd, TurnStart
from tests.goals.helpers import goal_runtime, service


def test_units_convert_and_round() -> None:
    assert parse_budget(1.4, "turns") == parse_budget(1, "turns")
    assert parse_budget(0.2, "tokens").limit == 1  # at least one
    assert parse_budget(2.5, "seconds").limit == 2500
    assert parse_budget(1, "hours").text == "1 hour"
    assert parse_budget(90, "minutes").limit == 5_400_000
    assert parse_budget(1000, "milliseconds").limit == 1000
    assert parse_budget(999, "milliseconds") is None
    assert parse_budget(24, "hours").limit == 86_400_000
    assert parse_budget(24.01, "hours") is None


def test_formats() -> None:
    assert [format_elapsed(ms) for ms in (0, 59_999, 60_000, 185_000, 7_620_000)] == [
        "0s",
        "59s",
        "1m00s",
        "3m05s",
        "2h07m",
    ]
    assert [format_tokens(n) for n in (950, 1000, 12_345, 1_250_000)] == [
        "950",
        "1.0k",
        "12.3k",
        "1.2M",
    ]


async def test_a_wall_clock_budget_counts_the_goal_s_time_in_turns(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", {"objective": "Refactor"})
    await runtime.call("SetGoalBudget", {"value": 10, "unit": "seconds"})
    goals = service(runtime)
    goals.turn_started(TurnStart("t1", "go"))
    assert goals.exceeded(steps=1, usage=Usage(), seconds=6.0) is None
    goals.turn_ended(TurnEnd("t1", "end_turn", 1, Usage(), 6.0))
    goals.turn_started(TurnStart("t2", "go"))
    assert goals.exceeded(steps=0, usage=Usage(), seconds=0.0) is None  # idle time is free
    reason = goals.exceeded(steps=1, usage=Usage(), seconds=4.5)
    assert reason is not None and "10s of 10s" in reason
    goal = goals.goal
    assert goal is not None and goal.status == "blocked"
    assert goals.exceeded(steps=2, usage=Usage(), seconds=5.0) is None  # blocked: no limit
    goals.turn_ended(TurnEnd("t2", "budget", 1, Usage(), 4.5))
    goal = goals.goal
    assert goal is not None and goal.wall_ms == 10_500 and goal.turns_used == 2


async def test_a_turn_stopped_before_its_first_step_is_not_counted(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", {"objective": "Refactor"})
    goals = service(runtime)
    goals.turn_started(TurnStart("t1", "go"))
    goals.turn_ended(TurnEnd("t1", "cancelled", 0, Usage(), 0.1))
    goal = goals.goal
    assert goal is not None and goal.turns_used == 0
