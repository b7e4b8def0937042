"""The list and its step counts live in the session store: a new Runtime on the same
session id (what `deftly run --resume` opens) has them back; another session does not."""

from __future__ import annotations

from pathlib import Path

from deftly import Runtime
from deftly.agent import Agent
from tests.agent.loop.helpers import openai_provider
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer
from tests.todo.helpers import FEATURES, FIRST_TWO
from tests.todo.test_loop import reminders


def runtime(workspace: Path, session_id: str | None = None) -> Runtime:
    return Runtime(
        workspace, features=FEATURES, plugins=False, approve_asks=True, session_id=session_id
    )


async def test_the_list_survives_a_resumed_session(workspace: Path) -> None:
    async with runtime(workspace) as rt:
        assert not (await rt.call("TodoList", {"todos": FIRST_TWO})).is_error
        session_id = rt.session_id
        kept = rt.session_dir / "state" / "todo.main.json"
    assert kept.is_file()
    async with runtime(workspace, session_id) as rt:
        read = await rt.call("TodoList", {})
        assert read.text == "Todo list:\n  [pending] first\n  [in_progress] second"
        await rt.call("TodoList", {"todos": []})
    async with runtime(workspace, session_id) as rt:
        assert (await rt.call("TodoList", {})).text == "The todo list is empty."
    async with runtime(workspace) as fresh:
        assert (await fresh.call("TodoList", {})).text == "The todo list is empty."


async def test_the_step_count_goes_on_in_a_resumed_session(workspace: Path) -> None:
    first = [calls(Call("TodoList", {"todos": FIRST_TWO})), say("Planned.")]
    first += [say(f"reply {n}") for n in range(4)]
    with ModelServer(first) as server:
        async with runtime(workspace) as rt:
            session_id = rt.session_id
            agent = Agent(rt, openai_provider(server))
            await agent.run("plan")
            for n in range(4):
                await agent.run(f"go on {n}")
            await agent.aclose()
    assert len(server.requests) == 6 and not any(reminders(r) for r in server.requests)
    # Six steps so far, five of them after the write: five more before the reminder.
    second = [say(f"again {n}") for n in range(6)]
    with ModelServer(second) as server:
        async with runtime(workspace, session_id) as rt:
            agent = Agent(rt, openai_provider(server))
            for n in range(6):
                await agent.run(f"more {n}")
            await agent.aclose()
    counts = [len(reminders(r)) for r in server.requests]
    assert counts == [0, 0, 0, 0, 0, 1]
    assert "2. [in_progress] second" in reminders(server.requests[5])[0]
