"""Goals driven by the agent loop against the scripted model server: budgets end turns
with `budget`, completion ends the turn, the model hears the goal, and it survives resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.agent import Agent
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.goals.helpers import FEATURES, goal_runtime
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

CREATE = Call("CreateGoal", {"objective": "Ship the parser", "completionCriterion": "tests pass"})


def system_notes(request: dict[str, Any]) -> str:
    """The `<system>` text of a recorded request's last user message (what was injected
    for this turn)."""
    last = [content_text(m) for m in request["messages"] if m["role"] == "user"][-1]
    return last if "<system>" in last else ""


async def test_a_turn_budget_ends_later_turns_with_budget(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    script = [
        calls(CREATE, Call("SetGoalBudget", {"value": 2, "unit": "turns"})),
        say("Working on it."),
        say("Still working."),
        say("After the budget."),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        first = await run_turn(agent, "set a goal")
        second = await run_turn(agent, "go on")
        asked = len(server.requests)
        third = await run_turn(agent, "go on")
        assert len(server.requests) == asked  # stopped before asking the model
        fourth = await run_turn(agent, "what now?")
        await agent.aclose()
    assert [t.end.stop_reason for t in (first, second, third)] == ["end_turn", "end_turn", "budget"]
    assert third.end.error is not None and "2 turns of 2" in third.end.error
    budget_set = tool_messages(server.requests[1])[1]
    assert "Goal budget set: 2 turns." in content_text(budget_set)
    told = system_notes(server.requests[2])  # the second turn's first request
    assert "Active goal: Ship the parser" in told
    assert "Done when: tests pass" in told
    assert "Budget left: 1 turn." in told
    # The blocked goal no longer stops turns; the model hears why the last one stopped.
    assert fourth.end.stop_reason == "end_turn"
    last = system_notes(server.requests[-1])
    assert "budget is used up" in last and "blocked" in last
    assert "Active goal" not in last


async def test_a_token_budget_ends_the_turn_mid_way(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    script = [
        calls(CREATE, Call("SetGoalBudget", {"value": 300, "unit": "tokens"})),
        calls(Call("GetGoal")),
        calls(Call("GetGoal")),
        say("never asked"),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "work until the budget is gone")
        await agent.aclose()
    assert turn.end.stop_reason == "budget"
    assert turn.end.steps == 3  # 120 tokens a step: 360 >= 300 before the fourth
    assert len(server.requests) == 3
    assert turn.end.error is not None and "360 tokens of 300" in turn.end.error
    # GetGoal in the second step sees the tokens known when it ran (the first step's).
    seen = json.loads(content_text(tool_messages(server.requests[2])[-1]))["goal"]
    assert seen["tokensUsed"] == 120 and seen["budget"]["remainingTokens"] == 180
    after = json.loads((await runtime.call("GetGoal", {})).result.text)["goal"]
    assert after["status"] == "blocked"
    assert after["tokensUsed"] == 360 and after["turnsUsed"] == 1
    assert after["budget"]["tokenBudgetReached"] is True


async def test_completing_the_goal_ends_the_turn(make_runtime: Any) -> None:
    runtime = await goal_runtime(make_runtime)
    script = [
        calls(CREATE),
        calls(Call("UpdateGoal", {"status": "complete"}), Call("GetGoal")),
        say("never asked"),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "do it")
        await agent.aclose()
    assert turn.end.stop_reason == "stop_turn"
    assert len(server.requests) == 2
    goal = json.loads((await runtime.call("GetGoal", {})).result.text)["goal"]
    assert goal["status"] == "complete"
    assert goal["turnsUsed"] == 1 and goal["tokensUsed"] == 240


async def test_the_goal_survives_a_new_runtime_on_the_same_session(workspace: Path) -> None:
    options: dict[str, Any] = {"features": FEATURES, "plugins": False, "approve_asks": True}
    with ModelServer(
        [calls(CREATE, Call("SetGoalBudget", {"value": 5, "unit": "turns"})), say("ok")]
    ) as server:
        async with Runtime(workspace, **options) as first:
            agent = Agent(first, openai_provider(server))
            await run_turn(agent, "set a goal")
            await agent.aclose()
            session_id = first.session_id
    with ModelServer([say("resumed")]) as server:
        async with Runtime(workspace, session_id=session_id, **options) as second:
            goal = json.loads((await second.call("GetGoal", {})).result.text)["goal"]
            agent = Agent(second, openai_provider(server))
            await run_turn(agent, "go on")
            await agent.aclose()
    assert goal["objective"] == "Ship the parser" and goal["status"] == "active"
    assert goal["turnsUsed"] == 1 and goal["tokensUsed"] == 240
    assert goal["budget"]["turnBudget"] == 5
    told = system_notes(server.requests[0])
    assert "Active goal: Ship the parser" in told and "Budget left: 4 turns." in told
