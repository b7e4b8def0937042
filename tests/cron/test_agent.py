"""Through the agent loop and the scripted model server (the real openai SDK): the model
schedules a one-minute job in a watched session; when the manual clock passes the minute
the scheduler fires it into the idle agent, whose next turn starts with the envelope."""

from __future__ import annotations

import asyncio
from typing import Any

from deftly.agent import Agent
from deftly.features.cron import ManualClock
from tests.agent.loop.helpers import content_text, openai_provider
from tests.cron.helpers import at, cron_runtime, service
from tests.mcp.conftest import eventually
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

START = at(2024, 5, 1, 10, 0, 20)


def last_user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    return content_text(users[-1])


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def test_a_job_the_model_schedules_fires_into_the_idle_watched_session(
    make_runtime: Any,
) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock, attach=False, cron={"poll_interval": 0.02})
    create = Call(
        "CronCreate", {"cron": "* * * * *", "prompt": "check the build", "recurring": False}
    )
    script = [calls(create), say("Scheduled."), say("The build is green.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turns = agent.watch("remind me in a minute to check the build")
        first = await asyncio.wait_for(anext(turns), 30)
        assert first.text == "Scheduled."
        assert len(service(runtime).jobs()) == 1
        second = asyncio.ensure_future(anext(turns))
        assert await eventually(lambda: runtime.agent.inbox.idle)
        clock.advance(60)
        fired = await asyncio.wait_for(second, 30)
        await turns.aclose()
        await agent.aclose()
    assert fired.text == "The build is green."
    assert fired.origin["kind"] == "cron_job" and fired.origin["recurring"] is False
    prompt = last_user_text(server.requests[2])
    assert prompt.startswith("<cron-fire jobId=")
    assert "\n<prompt>\ncheck the build\n</prompt>\n</cron-fire>" in prompt
    assert {"CronCreate", "CronList", "CronDelete"} <= offered(server.requests[0])
    assert service(runtime).jobs() == []  # the one-shot went once delivered
