"""What the model had still to hear when its agent closed (why the last turn stopped) is
told in the next turn: by a new `Agent` on the same runtime once, by an agent on a new
runtime of the same session (a new `deftly run` process) once, and never again after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.agent import Agent
from deftly.agent.held import HeldInjections, held_key
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

STOPPED = "The previous turn stopped after 1 steps (its step limit)"


def told(request: dict[str, Any]) -> int:
    """How many of the request's messages tell the model about the step limit."""
    return sum(STOPPED in content_text(m) for m in request["messages"])


async def stopped_turn(runtime: Runtime, server: ModelServer) -> None:
    """One turn ended by a step limit of 1 before the model heard why; the agent closes."""
    agent = Agent(runtime, openai_provider(server), max_steps=1)
    turn = await run_turn(agent, "look around")
    await agent.aclose()
    assert turn.end.stop_reason == "max_steps"


async def test_a_new_agent_on_the_same_runtime_tells_it_once(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([calls(Call("Glob", {"pattern": "*"})), say("ok"), say("ok")]) as server:
        await stopped_turn(runtime, server)
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "go on")
        await run_turn(agent, "and then?")
        await agent.aclose()
    assert [told(r) for r in server.requests[1:]] == [1, 1]  # once, then kept in history
    assert runtime.session.store.slot(held_key("main"), HeldInjections).get().pending == []


async def test_a_new_process_on_the_same_session_tells_it_once(workspace: Path) -> None:
    options: dict[str, Any] = {"plugins": False, "approve_asks": True}
    with ModelServer([calls(Call("Glob", {"pattern": "*"}))]) as server:
        async with Runtime(workspace, **options) as first:
            await stopped_turn(first, server)
            session_id = first.session_id
    with ModelServer([say("ok"), say("ok")]) as server:
        async with Runtime(workspace, session_id=session_id, **options) as second:
            agent = Agent(second, openai_provider(server))
            await run_turn(agent, "go on")
            await agent.aclose()
        async with Runtime(workspace, session_id=session_id, **options) as third:
            agent = Agent(third, openai_provider(server))
            await run_turn(agent, "and then?")
            await agent.aclose()
    assert [told(r) for r in server.requests] == [1, 1]  # told once, then in the history
    last_user = [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]
    assert STOPPED not in content_text(last_user)  # not pushed a second time
