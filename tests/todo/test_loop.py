"""TodoList driven by the agent loop against the scripted model server: the model writes
its list, the next request shows it, and a list left alone for ten model steps is
brought back to the model's attention."""

from __future__ import annotations

from typing import Any

from deftly.agent import Agent
from deftly.features.todo.render import REMINDER
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer
from tests.todo.helpers import FIRST_TWO, todo_runtime


def reminders(request: dict[str, Any]) -> list[str]:
    """The reminder texts in a recorded request (each in a user message)."""
    return [
        content_text(m)
        for m in request["messages"]
        if m["role"] == "user" and REMINDER in content_text(m)
    ]


async def test_the_written_list_is_in_the_next_request(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    script = [calls(Call("TodoList", {"todos": FIRST_TWO})), say("Planned.")]
    with ModelServer(script) as server:
        agent = Agent(rt, openai_provider(server))
        turn = await run_turn(agent, "plan the work")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    [result] = tool_messages(server.requests[1])
    text = content_text(result)
    assert "Todo list updated." in text
    assert "  [pending] first\n  [in_progress] second" in text
    assert "exactly one item in_progress" in text
    assert "TodoList" in [t["function"]["name"] for t in server.requests[0]["tools"]]


async def test_a_list_left_alone_for_ten_steps_is_recalled_then_every_ten_steps(
    make_runtime: Any,
) -> None:
    rt = await todo_runtime(make_runtime)
    # Step 1 writes the list, step 2 ends the turn; then one step per turn.
    script = [calls(Call("TodoList", {"todos": FIRST_TWO})), say("Planned.")]
    script += [say(f"reply {n}") for n in range(3, 23)]
    with ModelServer(script) as server:
        agent = Agent(rt, openai_provider(server))
        await agent.run("plan the work")
        for n in range(3, 23):
            await agent.run(f"go on {n}")
        await agent.aclose()
    requests = server.requests
    assert len(requests) == 22
    # Request i is step i + 1: i steps are finished before it, i - 1 of them after the write.
    assert [len(reminders(r)) for r in requests[:11]] == [0] * 11
    [told] = reminders(requests[11])
    assert told.endswith("Your todo list:\n1. [pending] first\n2. [in_progress] second</system>")
    assert [len(reminders(r)) for r in requests[12:21]] == [1] * 9  # not again yet
    assert len(reminders(requests[21])) == 2  # ten steps after the first reminder


async def test_steps_inside_one_turn_count_and_a_write_starts_the_count_again(
    make_runtime: Any,
) -> None:
    rt = await todo_runtime(make_runtime)
    globs = [calls(Call("Glob", {"pattern": f"*.{n}"})) for n in range(9)]
    write = calls(Call("TodoList", {"todos": [{"title": "only", "status": "in_progress"}]}))
    script = [*globs, write, *[calls(Call("Glob", {"pattern": f"*.x{n}"})) for n in range(10)]]
    script.append(say("done"))
    with ModelServer(script) as server:
        agent = Agent(rt, openai_provider(server))
        turn = await run_turn(agent, "work")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    requests = server.requests
    assert len(requests) == 21
    # Nine steps, then the write (step 10): no reminder before it, none for ten steps after.
    assert [len(reminders(r)) for r in requests[:20]] == [0] * 20
    [told] = reminders(requests[20])
    assert "1. [in_progress] only" in told


async def test_a_tool_that_was_never_used_is_recalled_without_a_list(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    script = [say(f"reply {n}") for n in range(12)]
    with ModelServer(script) as server:
        agent = Agent(rt, openai_provider(server))
        for n in range(12):
            await agent.run(f"question {n}")
        await agent.aclose()
    assert [len(reminders(r)) for r in server.requests[:10]] == [0] * 10
    [told] = reminders(server.requests[10])
    assert "Your todo list" not in told


async def test_no_reminder_when_the_tool_is_switched_off(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime, config={"tools": {"disabled": ["TodoList"]}})
    script = [say(f"reply {n}") for n in range(12)]
    with ModelServer(script) as server:
        agent = Agent(rt, openai_provider(server))
        for n in range(12):
            await agent.run(f"question {n}")
        await agent.aclose()
    assert all(not reminders(r) for r in server.requests)
    assert "TodoList" not in [t["function"]["name"] for t in server.requests[0]["tools"]]
