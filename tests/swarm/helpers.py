"""A fake sub-agent backend (a real `ChildBackend` in this process, with no model), and a
runtime with the swarm feature and that backend installed on the main agent's desk."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deftly import Runtime
from deftly.contract.tool import CancelToken
from deftly.features import BUILTIN_FEATURES
from deftly.session.subagents import AgentProfile, ChildOutcome, ChildSpec

CODER = AgentProfile("coder", "Writes and changes code.")
EXPLORE = AgentProfile("explore", "Reads and searches, changes nothing.", tools=("Read",))
FEATURES = BUILTIN_FEATURES

Answer = Callable[[ChildSpec], "ChildOutcome | None"]
"""How the fake answers a spec (None: wait until cancelled)."""


def done(spec: ChildSpec) -> ChildOutcome:
    """The default answer: the child completed, echoing its prompt."""
    return ChildOutcome(spec.agent_id, spec.profile.name, "completed", text=f"did: {spec.prompt}")


@dataclass
class FakeBackend:
    """Runs "children" that answer at once (or when `release` is set), counting how many
    run together; a child that gets no answer waits until its token is cancelled."""

    answer: Answer = done
    release: asyncio.Event | None = None
    earlier: set[str] = field(default_factory=set)
    """Ids of children that "ran before" (resumable)."""
    running: set[str] = field(default_factory=set)
    specs: list[ChildSpec] = field(default_factory=list)
    tokens: list[CancelToken] = field(default_factory=list)
    peak: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    """Set whenever a child starts (cleared by the test to wait for the next)."""

    async def run(self, spec: ChildSpec, cancel: CancelToken) -> ChildOutcome:
        self.specs.append(spec)
        self.tokens.append(cancel)
        self.running.add(spec.agent_id)
        self.peak = max(self.peak, len(self.running))
        self.started.set()
        try:
            if self.release is not None:
                await _first(self.release.wait(), cancel.wait())
            outcome = None if cancel.cancelled else self.answer(spec)
            if outcome is None:
                await cancel.wait()
                return ChildOutcome(
                    spec.agent_id,
                    spec.profile.name,
                    "cancelled",
                    error="The subagent was stopped before it finished by user."
                    if cancel.by_user
                    else "The subagent was stopped before it finished.",
                )
            return outcome
        finally:
            self.running.discard(spec.agent_id)
            self.earlier.add(spec.agent_id)

    def is_running(self, agent_id: str) -> bool:
        return agent_id in self.running

    def known(self, agent_id: str) -> bool:
        return agent_id in self.earlier or agent_id in self.running


async def _first(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def swarm_runtime(
    make_runtime: Callable[..., Any], backend: FakeBackend, **options: Any
) -> Runtime:
    """A started runtime with the swarm feature, its main agent's desk holding `backend`
    and the coder and explore profiles."""
    runtime: Runtime = await make_runtime(features=FEATURES, **options)
    desk = runtime.agent.subagents
    desk.backend = backend
    desk.profiles.update({CODER.name: CODER, EXPLORE.name: EXPLORE})
    return runtime
