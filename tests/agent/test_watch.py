"""`Agent.watch()`: inbox messages run as turns against the scripted model server (the
real openai SDK), only while the agent is idle; stopping the watch detaches it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from deftly.agent import Agent, AgentEvent, TurnResult
from deftly.agent import events as ev
from deftly.session.inbox import InboxMessage
from tests.agent.loop.helpers import content_text, openai_provider
from tests.mcp.conftest import eventually
from tests.scripted.script import Call, Reply, Say, calls, say
from tests.scripted.server import ModelServer

FIRED = InboxMessage(
    "<cron-fire id='j1'>check the build</cron-fire>", {"kind": "cron_job", "job_id": "j1"}
)


def last_user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    return content_text(users[-1])


def next_result(turns: AsyncIterator[TurnResult]) -> asyncio.Task[TurnResult]:
    async def one() -> TurnResult:
        return await anext(turns)

    return asyncio.ensure_future(one())


async def test_each_inbox_message_runs_as_a_turn_with_its_origin(make_runtime: Any) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    events: list[AgentEvent] = []
    with ModelServer([say("first done"), say("second done")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turns = agent.watch(on_event=events.append)
        first = next_result(turns)
        assert await eventually(lambda: inbox.idle)
        assert inbox.consumed
        inbox.put(FIRED)
        inbox.put(InboxMessage("plain prompt"))
        result = await asyncio.wait_for(first, 30)
        second = await asyncio.wait_for(anext(turns), 30)
        await turns.aclose()
        await agent.aclose()
    assert (result.text, result.stop_reason) == ("first done", "end_turn")
    assert result.origin == {"kind": "cron_job", "job_id": "j1"}
    assert (second.text, second.origin) == ("second done", {})
    assert [last_user_text(r) for r in server.requests] == [FIRED.text, "plain prompt"]
    started = [e for e in events if isinstance(e, ev.TurnStarted)]
    assert [s.prompt for s in started] == [FIRED.text, "plain prompt"]
    assert started[0].to_json()["origin"] == {"kind": "cron_job", "job_id": "j1"}
    assert "origin" not in started[1].to_json()
    assert not inbox.consumed and not inbox.idle


async def test_a_prompt_given_to_watch_runs_first_with_the_inbox_consumed(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    seen: list[bool] = []
    with ModelServer([say("prompt done")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turns = agent.watch("do this first", on_event=lambda e: seen.append(inbox.consumed))
        result = await asyncio.wait_for(anext(turns), 30)
        await turns.aclose()
        await agent.aclose()
    assert result.text == "prompt done" and result.origin == {}
    assert seen and all(seen)  # consumed (the inbox's tools offered) during that turn
    assert not inbox.consumed


async def test_a_message_put_during_a_run_waits_for_that_turn_to_end(make_runtime: Any) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    gate = threading.Event()
    script = [Reply((Say("typed turn done"),), gate=gate), say("fired turn done")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turns = agent.watch()
        fired = next_result(turns)
        try:
            assert await eventually(lambda: inbox.idle)
            typed = asyncio.ensure_future(agent.run("a typed prompt"))
            assert await eventually(lambda: len(server.requests) == 1)
            assert not inbox.idle  # a turn holds the agent: producers hold their work back
            inbox.put(FIRED)
            for _ in range(20):
                await asyncio.sleep(0)  # let every ready task run; the turn still holds
            assert len(inbox) == 1 and not fired.done()
            gate.set()
            typed_result = await asyncio.wait_for(typed, 30)
            fired_result = await asyncio.wait_for(fired, 30)
        finally:
            gate.set()
            await turns.aclose()
            await agent.aclose()
    assert typed_result.text == "typed turn done" and typed_result.origin == {}
    assert fired_result.text == "fired turn done"
    assert [last_user_text(r) for r in server.requests] == ["a typed prompt", FIRED.text]
    # the fired turn came after the typed one: its request carries the whole typed turn
    assert "typed turn done" in str(server.requests[1]["messages"])


async def test_cancelling_the_watch_detaches_and_cancels_its_running_turn(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    gate = threading.Event()
    script = [Reply((Say("never finished"),), gate=gate), say("afterwards")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        events: list[AgentEvent] = []
        turns = agent.watch(on_event=events.append)
        task = next_result(turns)
        try:
            assert await eventually(lambda: inbox.idle)
            inbox.put(FIRED)
            assert await eventually(lambda: len(server.requests) == 1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 30)
            assert not inbox.consumed and not inbox.idle
            gate.set()
            after = await asyncio.wait_for(agent.run("go on"), 30)  # the agent is free
        finally:
            gate.set()
            await agent.aclose()
    assert [type(e) for e in events][:1] == [ev.TurnStarted]
    assert after.text == "afterwards"
    # the abandoned turn ended as interrupted by the user, and the model hears so
    assert "interrupted by the user" in str(server.requests[1]["messages"])


async def test_a_watch_that_is_cancelled_while_waiting_leaves_messages_in_the_inbox(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime()
    inbox = runtime.agent.inbox
    with ModelServer([]) as server:
        agent = Agent(runtime, openai_provider(server))
        task = next_result(agent.watch())
        assert await eventually(lambda: inbox.idle)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        inbox.put(FIRED)
        await agent.aclose()
    assert len(inbox) == 1 and not inbox.consumed
    assert server.requests == []


async def test_a_cron_job_fires_into_a_watching_agent_and_its_tools_exist_only_then(
    make_runtime: Any,
) -> None:
    from deftly.features import BUILTIN_FEATURES
    from deftly.features.cron import CronScheduler, ManualClock
    from deftly.features.cron.feature import CronFeature

    clock = ManualClock(1_767_225_630.0)  # half a minute past a minute
    features = [f for f in BUILTIN_FEATURES if f.name != "cron"] + [CronFeature(clock=clock)]
    runtime = await make_runtime(
        features=features, config={"cron": {"poll_interval": 0, "no_jitter": True}}
    )
    inbox = runtime.agent.inbox

    def names() -> set[str]:
        return {t.name for t in runtime.tools()}

    assert not names() & {"CronCreate", "CronList", "CronDelete"}
    create = Call("CronCreate", {"cron": "* * * * *", "prompt": "check the build"})
    script = [calls(create), say("Scheduled."), say("Build checked.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turns = agent.watch("check the build every minute")
        first = await asyncio.wait_for(anext(turns), 30)
        assert first.text == "Scheduled."
        assert {"CronCreate", "CronList", "CronDelete"} <= names()
        offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
        assert "CronCreate" in offered
        fired = next_result(turns)
        assert await eventually(lambda: inbox.idle)
        scheduler = runtime.agent.services.find(CronScheduler)
        assert scheduler is not None
        assert scheduler.tick() == 0  # not due yet
        clock.advance(60)
        assert scheduler.tick() == 1
        result = await asyncio.wait_for(fired, 30)
        await turns.aclose()
        await agent.aclose()
    assert result.text == "Build checked."
    assert result.origin["kind"] == "cron_job" and result.origin["cron"] == "* * * * *"
    fire = last_user_text(server.requests[2])
    assert fire.startswith("<cron-fire") and "check the build" in fire
    assert not names() & {"CronCreate", "CronList", "CronDelete"}
