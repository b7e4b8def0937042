"""AskUserQuestion in a real agent loop against the scripted model server: the model is
offered the tool, calls it, the host's answerer answers, and the next request carries the
answers as JSON in the tool message."""

from __future__ import annotations

from typing import Any

from deftly.agent import Agent
from deftly.session.questions import QuestionRequest
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.ask.helpers import DB, EXTRAS, TOOL, answers_of, ask
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def test_the_model_asks_and_reads_the_answers_in_the_next_request(
    make_runtime: Any,
) -> None:
    asked: list[QuestionRequest] = []

    def person(request: QuestionRequest) -> dict[str, str]:
        asked.append(request)
        return {"Which DB?": "SQLite", "Which extras?": "Auth, Search"}

    runtime = await make_runtime(answerer=person)
    script = [calls(Call(TOOL, ask(DB, EXTRAS))), say("SQLite with auth and search, then.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "set up the project")
        await agent.aclose()
    assert TOOL in offered(server.requests[0])
    [request] = asked
    assert [q.question for q in request.questions] == ["Which DB?", "Which extras?"]
    assert request.identity is not None and request.identity.session_id == agent.session_id
    [result] = tool_messages(server.requests[1])
    assert answers_of(content_text(result)) == {
        "answers": {"Which DB?": "SQLite", "Which extras?": "Auth, Search"}
    }
    assert turn.end.stop_reason == "end_turn"


async def test_without_an_answerer_the_model_is_not_offered_the_tool(make_runtime: Any) -> None:
    runtime = await make_runtime()
    with ModelServer([say("I will ask in my reply.")]) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "set up the project")
        await agent.aclose()
    assert TOOL not in offered(server.requests[0])
    assert "Read" in offered(server.requests[0])
