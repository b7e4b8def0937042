"""The goal tools called through the runtime: the reference's cases (§14, §24 #49-50)."""

from __future__ import annotations

from typing import Any

from deftly.contract.display import GoalStartDisplay
from deftly.contract.tool import ToolContext
from deftly.execution.calls import Outcome, ToolCall
from deftly.features.goals.create_goal import CreateGoalParams
from deftly.features.goals.set_goal_budget import SetGoalBudgetParams
from deftly.features.goals.update_goal import UpdateGoalParams
from tests.goals.helpers import goal_json, goal_runtime, play_turns, service

OBJECTIVE = {"objective": "Make tests/api pass", "completionCriterion": "pytest tests/api is green"}


async def test_get_goal_without_a_goal_is_null(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    result = await runtime.call("GetGoal", {})
    assert result.result.text == '{\n  "goal": null\n}'
    assert not result.result.is_error


async def test_create_goal_returns_the_snapshot_and_get_goal_reads_it(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    created = await runtime.call("CreateGoal", {**OBJECTIVE, "objective": "  Make tests/api pass "})
    assert not created.result.is_error
    goal = goal_json(created.result.text)
    assert goal["objective"] == "Make tests/api pass"  # trimmed
    assert goal["completionCriterion"] == "pytest tests/api is green"
    assert goal["status"] == "active"
    assert goal["turnsUsed"] == 0 and goal["tokensUsed"] == 0
    assert goal["budget"]["overBudget"] is False
    assert goal["budget"]["turnBudget"] is None
    assert "goalId" not in goal and "goal_id" not in goal
    assert isinstance(created.display, GoalStartDisplay)
    assert created.display.objective == "Make tests/api pass"
    assert created.display.mode == "manual"
    assert goal_json((await runtime.call("GetGoal", {})).result.text) == goal


async def test_create_goal_has_no_review_display_in_auto_mode(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime, mode="auto")
    created = await runtime.call("CreateGoal", OBJECTIVE)
    assert not created.result.is_error
    assert created.display is None


async def test_create_goal_limits_the_objective(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    blank = await runtime.call("CreateGoal", {"objective": "   "})
    assert blank.result.is_error and "cannot be empty" in blank.result.text
    empty = await runtime.call("CreateGoal", {"objective": ""})
    assert empty.result.is_error  # the schema's minLength
    long = await runtime.call("CreateGoal", {"objective": "x" * 4001})
    assert long.result.is_error
    assert "cannot exceed 4000 characters" in long.result.text
    assert "file path" in long.result.text
    assert goal_json((await runtime.call("GetGoal", {})).result.text) is None
    extra = await runtime.call("CreateGoal", {"objective": "x", "reason": "y"})
    assert extra.result.is_error  # a closed schema


async def test_a_second_goal_needs_replace(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    again = await runtime.call("CreateGoal", {"objective": "Something else"})
    assert again.result.is_error
    assert "replace" in again.result.text
    assert goal_json((await runtime.call("GetGoal", {})).result.text)["objective"] == (
        "Make tests/api pass"
    )
    replaced = await runtime.call("CreateGoal", {"objective": "Something else", "replace": True})
    assert goal_json(replaced.result.text)["objective"] == "Something else"


async def test_a_completed_goal_makes_way_for_a_new_one(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    await runtime.call("UpdateGoal", {"status": "complete"})
    fresh = await runtime.call("CreateGoal", {"objective": "Next"})
    assert not fresh.result.is_error
    assert goal_json(fresh.result.text)["status"] == "active"


async def test_update_goal_without_a_goal(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    texts = {}
    for status in ("complete", "blocked", "active"):
        result = await runtime.call("UpdateGoal", {"status": status})
        assert not result.result.is_error and not result.result.stop_turn
        texts[status] = result.result.text
    assert texts == {
        "complete": "Goal not completed: no active goal.",
        "blocked": "Goal not blocked: no active goal.",
        "active": "Goal not resumed: no current goal.",
    }


async def test_update_goal_rejects_paused_in_the_schema_and_in_resolve(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    paused = await runtime.call("UpdateGoal", {"status": "paused"})
    assert paused.result.is_error
    reason = await runtime.call("UpdateGoal", {"status": "complete", "reason": "done"})
    assert reason.result.is_error  # no reason field
    tool = runtime.agent.registry.get("UpdateGoal").tool
    resolved = tool.resolve(UpdateGoalParams.model_construct(status="paused"))
    assert resolved.is_error
    assert resolved.text == "Invalid goal status. Use `active`, `complete`, or `blocked`."


async def test_completing_the_goal_stops_the_turn(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    play_turns(service(runtime), 2)
    done = await runtime.call("UpdateGoal", {"status": "complete"})
    assert done.result.stop_turn and not done.result.is_error
    assert done.result.text.startswith("Goal completed successfully.")
    assert "Worked 2 turns over 4s, using 240 tokens." in done.result.text
    assert "Write a concise final message for the user" in done.result.text
    goal = goal_json((await runtime.call("GetGoal", {})).result.text)
    assert goal["status"] == "complete"


async def test_blocking_the_goal_stops_the_turn_and_resume_brings_it_back(
    make_runtime: Any,
) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    blocked = await runtime.call("UpdateGoal", {"status": "blocked"})
    assert blocked.result.stop_turn
    assert "Goal blocked." in blocked.result.text
    assert "concrete blocker" in blocked.result.text
    again = await runtime.call("UpdateGoal", {"status": "blocked"})
    assert again.result.text.startswith("Goal not blocked: no active goal")
    assert not again.result.stop_turn
    resumed = await runtime.call("UpdateGoal", {"status": "active"})
    assert resumed.result.text == "Goal resumed."
    assert goal_json((await runtime.call("GetGoal", {})).result.text)["status"] == "active"


async def test_ending_the_goal_skips_the_rest_of_the_batch(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    done, after = await runtime.run_batch(
        [ToolCall("a", "UpdateGoal", {"status": "complete"}), ToolCall("b", "GetGoal", {})]
    )
    assert done.result.stop_turn
    assert after.outcome == Outcome.SKIPPED
    resumed, after = await runtime.run_batch(
        [ToolCall("c", "UpdateGoal", {"status": "active"}), ToolCall("d", "GetGoal", {})]
    )
    assert resumed.result.text == "Goal resumed."
    assert after.outcome != Outcome.SKIPPED  # resuming does not stop the batch


async def test_set_goal_budget_without_a_goal(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    result = await runtime.call("SetGoalBudget", {"value": 20, "unit": "turns"})
    assert result.result.text == "Goal budget not set: no current goal."
    assert not result.result.is_error and not result.result.stop_turn


async def test_set_goal_budget_under_what_is_used(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    play_turns(service(runtime), 2)
    five, after = await runtime.run_batch(
        [ToolCall("a", "SetGoalBudget", {"value": 5, "unit": "turns"}), ToolCall("b", "GetGoal")]
    )
    assert five.result.text == "Goal budget set: 5 turns."
    assert not five.result.stop_turn
    assert after.outcome != Outcome.SKIPPED
    budget = goal_json(after.result.text)["budget"]
    assert budget["turnBudget"] == 5 and budget["remainingTurns"] == 3


async def test_a_budget_already_reached_blocks_the_goal_and_stops(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    play_turns(service(runtime), 1)
    one, after = await runtime.run_batch(
        [ToolCall("a", "SetGoalBudget", {"value": 1, "unit": "turns"}), ToolCall("b", "GetGoal")]
    )
    assert one.result.stop_turn and not one.result.is_error
    assert "will stop now" in one.result.text
    assert after.outcome == Outcome.SKIPPED  # stop_batch_after_this
    goal = goal_json((await runtime.call("GetGoal", {})).result.text)
    assert goal["status"] == "blocked"
    assert goal["budget"]["overBudget"] is True
    assert goal["budget"]["turnBudgetReached"] is True
    assert "budget" in goal["terminalReason"]
    refused = await runtime.call("UpdateGoal", {"status": "active"})
    assert refused.result.text.startswith("Goal not resumed")
    raised = await runtime.call("SetGoalBudget", {"value": 3, "unit": "turns"})
    assert raised.result.text == "Goal budget set: 3 turns."
    resumed = await runtime.call("UpdateGoal", {"status": "active"})
    assert resumed.result.text == "Goal resumed."
    assert "terminalReason" not in goal_json((await runtime.call("GetGoal", {})).result.text)


async def test_unreasonable_and_rounded_budgets(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    half = await runtime.call("SetGoalBudget", {"value": 0.5, "unit": "seconds"})
    assert half.result.text.startswith(
        "Goal budget not set: 0.5 seconds is not a reasonable goal budget."
    )
    day = await runtime.call("SetGoalBudget", {"value": 25, "unit": "hours"})
    assert day.result.text.startswith(
        "Goal budget not set: 25 hours is not a reasonable goal budget."
    )
    assert not half.result.is_error and not day.result.is_error
    rounded = await runtime.call("SetGoalBudget", {"value": 1.4, "unit": "turns"})
    assert rounded.result.text == "Goal budget set: 1 turn."
    minutes = await runtime.call("SetGoalBudget", {"value": 30, "unit": "minutes"})
    assert minutes.result.text == "Goal budget set: 30 minutes."
    tokens = await runtime.call("SetGoalBudget", {"value": 50000, "unit": "tokens"})
    assert tokens.result.text == "Goal budget set: 50000 tokens."
    budget = goal_json((await runtime.call("GetGoal", {})).result.text)["budget"]
    assert budget == {
        **budget,
        "turnBudget": 1,
        "wallClockBudgetMs": 1_800_000,
        "tokenBudget": 50000,
        "remainingTokens": 50000,
    }
    for bad in ({"value": 0, "unit": "turns"}, {"value": 5, "unit": "days"}):
        assert (await runtime.call("SetGoalBudget", bad)).result.is_error  # the schema


async def test_goal_tools_refuse_a_sub_agent(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    child = await runtime.agent.spawn_child("helper")
    calls = [
        ToolCall("1", "CreateGoal", {"objective": "Mine", "replace": True}),
        ToolCall("2", "GetGoal", {}),
        ToolCall("3", "UpdateGoal", {"status": "complete"}),
        ToolCall("4", "SetGoalBudget", {"value": 3, "unit": "turns"}),
    ]
    for result in await child.run_batch(calls):
        assert result.result.is_error
        assert result.result.text == "Goal tools are only supported by the main agent."
        assert result.outcome == Outcome.SYNTHETIC  # refused at resolve: nothing ran
    goal = goal_json((await runtime.call("GetGoal", {})).result.text)
    assert goal["objective"] == "Make tests/api pass" and goal["budget"]["turnBudget"] is None


async def test_a_goal_made_in_the_same_batch_takes_the_later_calls(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    results = await runtime.run_batch(
        [
            ToolCall("a", "CreateGoal", {"objective": "New one", "replace": True}),
            ToolCall("b", "SetGoalBudget", {"value": 2, "unit": "turns"}),
        ]
    )
    # The budget call saw the old goal at resolve; the new one was made by this batch.
    assert results[1].result.text == "Goal budget set: 2 turns."
    goal = goal_json((await runtime.call("GetGoal", {})).result.text)
    assert goal["objective"] == "New one" and goal["budget"]["turnBudget"] == 2


async def test_a_call_whose_goal_changed_before_it_ran_refuses(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    await runtime.call("CreateGoal", OBJECTIVE)
    goals = service(runtime)
    pending = {
        name: runtime.agent.registry.get(name).tool.resolve(params)
        for name, params in [
            ("SetGoalBudget", SetGoalBudgetParams(value=2, unit="turns")),
            ("UpdateGoal", UpdateGoalParams(status="complete")),
            ("CreateGoal", CreateGoalParams(objective="Third", replace=True)),
        ]
    }
    goals.create("Someone else's goal", None)
    play_turns(goals, 1)  # a later turn: the goal was not made by the calls' own turn
    texts = {name: (await e.execute(ToolContext("x"))).text for name, e in pending.items()}
    assert texts == {
        "SetGoalBudget": "Goal budget not set: the current goal changed.",
        "UpdateGoal": "Goal not completed: the current goal changed.",
        "CreateGoal": "Goal not created: the current goal changed.",
    }
    goal = goal_json((await runtime.call("GetGoal", {})).result.text)
    assert goal["objective"] == "Someone else's goal"
    assert goal["status"] == "active" and goal["budget"]["turnBudget"] is None
