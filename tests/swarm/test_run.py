"""Running a swarm through a backend (a fake one here: the children are coroutines): the
concurrency limit, item order, a failing child among good ones, cancellation, progress,
and a resume that remembers its item."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from deftly.contract.tool import CancelToken
from deftly.execution import ToolProgress
from deftly.session.subagents import ChildOutcome, ChildSpec
from tests.swarm.helpers import FakeBackend, done, swarm_runtime


def items(count: int) -> list[str]:
    return [f"src/mod{n:02}.py" for n in range(count)]


def subagents(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("<subagent")]


async def test_twenty_items_four_at_a_time_in_item_order(make_runtime: Callable[..., Any]) -> None:
    backend = FakeBackend(release=asyncio.Event())
    runtime = await swarm_runtime(make_runtime, backend)
    call = asyncio.ensure_future(
        runtime.call(
            "AgentSwarm",
            {"description": "review", "prompt_template": "Review {{item}}", "items": items(20)},
        )
    )
    while len(backend.running) < 4:  # the first four start; the rest wait their turn
        backend.started.clear()
        await backend.started.wait()
    assert len(backend.specs) == 4
    backend.release.set()
    result = await call
    assert not result.is_error, result.text
    assert backend.peak == 4
    assert [s.item for s in backend.specs] == items(20)  # launched in item order
    lines = subagents(result.text)
    assert [re.search(r'item="([^"]+)"', line)[1] for line in lines] == items(20)  # type: ignore[index]
    assert all(line.endswith("</subagent>") and 'outcome="completed"' in line for line in lines)
    assert "<summary>completed: 20, failed: 0</summary>" in result.text
    ids = [s.agent_id for s in backend.specs]
    assert len(set(ids)) == 20 and all(s.parent_id == "main" for s in backend.specs)
    assert backend.specs[0].description == "review #1 (coder)"
    assert backend.specs[0].timeout == 7200 and backend.specs[0].profile.name == "coder"


async def test_the_limit_comes_from_the_agents_table(make_runtime: Callable[..., Any]) -> None:
    backend = FakeBackend(release=asyncio.Event())
    runtime = await swarm_runtime(
        make_runtime, backend, config={"agents": {"max_concurrency": 2, "timeout": 30}}
    )
    call = asyncio.ensure_future(
        runtime.call(
            "AgentSwarm",
            {"description": "d", "prompt_template": "Do {{item}}", "items": items(6)},
        )
    )
    while len(backend.running) < 2:
        backend.started.clear()
        await backend.started.wait()
    backend.release.set()
    result = await call
    assert not result.is_error and backend.peak == 2
    assert backend.specs[0].timeout == 30


async def test_a_failing_child_does_not_fail_the_rest(make_runtime: Callable[..., Any]) -> None:
    def answer(spec: ChildSpec) -> ChildOutcome:
        if spec.item == "src/mod03.py":
            return ChildOutcome(spec.agent_id, "coder", "failed", error="The model refused.")
        if spec.item == "src/mod05.py":
            raise RuntimeError("backend lost its connection")
        return done(spec)

    backend = FakeBackend(answer=answer)
    runtime = await swarm_runtime(make_runtime, backend)
    result = await runtime.call(
        "AgentSwarm",
        {"description": "d", "prompt_template": "Check {{item}}", "items": items(8)},
    )
    assert not result.is_error
    assert "<summary>completed: 6, failed: 2</summary>" in result.text
    lines = subagents(result.text)
    assert 'outcome="failed">The model refused.</subagent>' in lines[3]
    assert "could not run: backend lost its connection" in lines[5]
    assert "<resume_hint>" in result.text
    assert lines[4].endswith(">did: Check src/mod04.py</subagent>")


async def test_cancelling_stops_every_child_and_launches_no_more(
    make_runtime: Callable[..., Any],
) -> None:
    backend = FakeBackend(answer=lambda spec: None)  # every child runs until stopped
    runtime = await swarm_runtime(make_runtime, backend)
    token = CancelToken()
    call = asyncio.ensure_future(
        runtime.call(
            "AgentSwarm",
            {"description": "d", "prompt_template": "Work on {{item}}", "items": items(10)},
            cancel=token,
        )
    )
    while len(backend.running) < 4:
        backend.started.clear()
        await backend.started.wait()
    token.cancel("stopped", by_user=True)
    result = await asyncio.wait_for(call, 30)
    assert len(backend.specs) == 4 and backend.running == set()
    assert all(t.cancelled and t.by_user for t in backend.tokens)
    assert "<summary>completed: 0, failed: 0, aborted: 10</summary>" in result.text
    lines = subagents(result.text)
    assert all('state="started"' in line and "agent_id=" in line for line in lines[:4])
    assert all('state="not_started"' in line and "agent_id=" not in line for line in lines[4:])
    assert "The user interrupted the swarm before this sub-agent started." in lines[9]
    assert "<resume_hint>" in result.text


async def test_progress_as_children_finish(make_runtime: Callable[..., Any]) -> None:
    runtime = await swarm_runtime(make_runtime, FakeBackend())
    seen: list[ToolProgress] = []
    runtime.subscribe(lambda e: seen.append(e) if isinstance(e, ToolProgress) else None)
    await runtime.call(
        "AgentSwarm", {"description": "d", "prompt_template": "Do {{item}}", "items": items(3)}
    )
    assert [p.update.text for p in seen] == [f"{n}/3 sub-agents finished" for n in (1, 2, 3)]


async def test_a_resume_reports_the_item_it_worked_on(make_runtime: Callable[..., Any]) -> None:
    def answer(spec: ChildSpec) -> ChildOutcome:
        if spec.item == "b" and not spec.resume:
            return ChildOutcome(spec.agent_id, "coder", "timed_out", error="Agent timed out.")
        return done(spec)

    backend = FakeBackend(answer=answer)
    runtime = await swarm_runtime(make_runtime, backend)
    first = await runtime.call(
        "AgentSwarm",
        {"description": "d", "prompt_template": "Do {{item}}", "items": ["a", "b"]},
    )
    failed = re.search(r'agent_id="([^"]+)" item="b" outcome="failed"', first.text)
    assert failed is not None
    again = await runtime.call(
        "AgentSwarm",
        {
            "description": "d",
            "prompt_template": "Do {{item}}",
            "items": ["c", "d"],
            "resume_agent_ids": {failed[1]: "continue"},
        },
    )
    lines = subagents(again.text)
    assert lines[0].startswith(f'<subagent mode="resume" agent_id="{failed[1]}" item="b"')
    assert [s.prompt for s in backend.specs[2:]] == ["continue", "Do c", "Do d"]
    assert backend.specs[2].description == "d #1 (resume)" and backend.specs[2].resume
