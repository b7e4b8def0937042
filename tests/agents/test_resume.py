"""Resuming a sub-agent by id: it goes on with its own conversation, in the same process
and after the session is opened again; ids that are not this parent's are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.agent import Agent
from deftly.agent.children import STATE_KEY, ChildRecord, ChildrenState
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.agents.helpers import Router, agent_call, features, last_tool_result, reported_id
from tests.scripted.script import calls, say
from tests.scripted.server import ModelServer


def _messages_text(body: dict[str, Any]) -> str:
    return "\n".join(content_text(m) for m in body["messages"])


async def test_a_resumed_child_goes_on_with_its_conversation_in_the_same_process(
    make_runtime: Any,
) -> None:
    router = Router(
        parent=[
            calls(agent_call("MARK-R: count the modules")),
            lambda body: calls(agent_call("now count the tests too", resume=reported_id(body))),
            say("Both counts are in."),
        ],
        children={"MARK-R": [say("There are 7 modules."), say("And 3 test files.")]},
    )
    runtime = await make_runtime(features=features())
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "count things")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    first_id = reported_id(router.seen["parent"][1])
    second = last_tool_result(router.seen["parent"][2])
    assert second.startswith(
        f"agent_id: {first_id}\nactual_subagent_type: coder\nstatus: completed\n\n"
        "[summary]\nAnd 3 test files."
    )
    resumed = router.seen["MARK-R"][1]
    assert "There are 7 modules." in _messages_text(resumed)
    assert resumed["messages"][-1] == {"role": "user", "content": "now count the tests too"}


async def test_a_child_is_resumed_after_the_session_is_opened_again(workspace: Path) -> None:
    router = Router(
        parent=[
            calls(agent_call("MARK-S: find the entry point", subagent_type="explore")),
            say("Found it."),
            lambda body: calls(agent_call("and its tests?", resume=_first_id(router))),
            say("Tests found too."),
        ],
        children={"MARK-S": [say("It is main.py."), say("tests/test_main.py.")]},
    )
    with ModelServer(router) as server:
        async with Runtime(workspace, features=features(), plugins=False) as runtime:
            session_id = runtime.session_id
            agent = Agent(runtime, openai_provider(server))
            await run_turn(agent, "find the entry point")
            await agent.aclose()
        async with Runtime(
            workspace, features=features(), plugins=False, session_id=session_id
        ) as runtime:
            agent = Agent(runtime, openai_provider(server))
            turn = await run_turn(agent, "and the tests?")
            await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    child_id = _first_id(router)
    result = last_tool_result(router.seen["parent"][3])
    assert result.startswith(
        f"agent_id: {child_id}\nactual_subagent_type: explore\nstatus: completed\n\n"
        "[summary]\ntests/test_main.py."
    )
    resumed = router.seen["MARK-S"][1]
    assert "It is main.py." in _messages_text(resumed)
    # still an explore agent: the same read-only tools
    tools = {t["function"]["name"] for t in resumed["tools"]}
    assert "Read" in tools and "Write" not in tools


def _first_id(router: Router) -> str:
    return reported_id(router.seen["parent"][1])


async def test_resume_refuses_unknown_ids_a_type_and_another_parents_child(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime(features=features())
    slot = runtime.session.store.slot(STATE_KEY, ChildrenState)
    slot.set(
        ChildrenState(children={"coder-zzzzzzzz": ChildRecord(parent="someone", profile="coder")})
    )
    router = Router(
        parent=[
            calls(
                agent_call("x", resume="coder-nope0000"),
                agent_call("x", resume="coder-zzzzzzzz", subagent_type="coder"),
                agent_call("x", resume="coder-zzzzzzzz"),
                agent_call("x", subagent_type="reviewer"),
            ),
            say("ok"),
        ],
        children={},
    )
    with ModelServer(router) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "resume things")
        await agent.aclose()
    results = [content_text(m) for m in router.seen["parent"][1]["messages"] if m["role"] == "tool"]
    error = "<system>ERROR: the tool call failed.</system>\n"
    assert all(r.startswith(error) for r in results)
    results = [r.removeprefix(error) for r in results]
    assert 'Agent instance "coder-nope0000" does not exist.' in results[0]
    assert results[1] == (
        "Cannot set subagent_type when resuming an existing agent. Resume by agent id only."
    )
    assert results[2] == (
        "agent_id: coder-zzzzzzzz\nactual_subagent_type: coder\nstatus: failed\n\n"
        'subagent error: Agent instance "coder-zzzzzzzz" does not belong to this parent agent.'
    )
    assert results[3] == (
        'Unknown agent type: "reviewer". Available agent types: coder, explore, plan.'
    )
