"""The local sub-agent backend: children run in this process, through the same loop.

`Agent.start()` installs a `LocalChildren` on the desk of the agent it drives (while the
depth bound allows). A child is a scope from `spawn_child` (its tools its profile's
within its parent's; the same session, mode, rules, approvals and approver), driven by
its own `Agent` over a `ChildScope`: the parent's system prompt plus a sub-agent role and
the profile's instructions, the profile's model or the parent's, its transcript in the
session (`transcripts/<id>.jsonl`), so a resume, even after a restart, has its history.

Every event of a child reaches the parent's stream with the child's `agent_id` (except
its turn's start and end, which become `SubagentStarted` / `SubagentEnded`); text deltas
stay with the child (the complete texts come through).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias

from pydantic import BaseModel, Field

from deftly.agent import events as ev
from deftly.agent.scope import ChildScope
from deftly.agent.transcript import transcript_path
from deftly.contract.errors import DeftlyError
from deftly.contract.tool import CancelToken
from deftly.contract.traits import traits_of
from deftly.providers.base import ChatProvider
from deftly.providers.types import Usage
from deftly.registry.activation import Profile
from deftly.runtime.agent_runtime import AgentRuntime
from deftly.session.subagents import (
    AgentProfile,
    ChildBackend,
    ChildOutcome,
    ChildSpec,
    ChildStatus,
    spoken_duration,
)

if TYPE_CHECKING:
    from deftly.agent.agent import Agent

log = logging.getLogger(__name__)

STATE_KEY = "agents.children"
"""Where the session keeps which agent started which child (so resume checks ownership
after a restart)."""

ROLE = """\
# You are a sub-agent
You are now running as a sub-agent: another agent (your parent) gave you the task in the
next message. You start without its conversation, so everything you know is in that
message and in the workspace. Work on your own with your tools; your parent sees
nothing of your work until you finish. Your final reply (without tool calls) goes to
your parent, not to the user: make it a complete, self-contained report of what you
found or did (paths, commands, results, what is left undone)."""

FORWARDED_NOT = (ev.TurnStarted, ev.TurnEnded, ev.TextDelta, ev.ReasoningDelta)
"""A child's events its parent's stream does not repeat (they become SubagentStarted /
SubagentEnded, or the complete Text / Reasoning carry the same words)."""


class ClosingBackend(ChildBackend, Protocol):
    """A backend an agent installs on its desk, and closes when it closes."""

    async def aclose(self) -> None:
        """Stop what it runs and let go of what it holds."""
        ...


ChildrenFactory: TypeAlias = Callable[["Agent", AgentRuntime, int], ClosingBackend]
"""Makes the backend of an agent's children from the agent, its scope and its depth (0:
the main agent). The local backend (`LocalChildren`) is one; a host above the agent loop
passes another to `Agent(children_backend=...)` (the Ray one: `deftly.scale`)."""


class ChildRecord(BaseModel):
    """One child of the session, as kept in the state store."""

    parent: str
    profile: str
    description: str = ""


class ChildrenState(BaseModel):
    """Every child of the session by id."""

    children: dict[str, ChildRecord] = Field(default_factory=dict)


def child_prompt(parent_prompt: str, profile: AgentProfile) -> str:
    """A child's system prompt: its parent's, the sub-agent role, its profile's
    instructions (the parent's stays a prefix, so a provider's prompt cache is shared)."""
    parts = [parent_prompt.rstrip("\n"), "", ROLE]
    if profile.instructions.strip():
        parts += ["", f"# Instructions for the {profile.name} agent", profile.instructions.strip()]
    return "\n".join(parts) + "\n"


def profile_delegates(profile: AgentProfile, scope: AgentRuntime) -> bool:
    """Whether the profile asks for delegation: its allow list names a tool of the child
    that hands work to sub-agents (a profile with every tool does not: chains end)."""
    if profile.tools is None:
        return False
    listed = set(profile.tools)
    for entry in scope.registry.entries():
        traits = traits_of(entry.tool)
        if entry.name in listed and traits is not None and traits.delegates:
            return True
    return False


@dataclass
class _Child:
    """A child this backend started (or took back for a resume)."""

    agent: Agent
    profile: AgentProfile
    usage: dict[str, Usage] = field(default_factory=dict)


class LocalChildren:
    """A `ChildBackend` that runs an agent's children in this process."""

    def __init__(self, parent: Agent, scope: AgentRuntime, depth: int) -> None:
        self.parent = parent
        self.scope = scope
        self.depth = depth
        """The parent's depth (0: the main agent); its children are one deeper."""
        self._children: dict[str, _Child] = {}
        self._running: set[str] = set()
        self._slot = scope.session.store.slot(STATE_KEY, ChildrenState)
        self._lock = asyncio.Lock()

    # -- what the tools ask ------------------------------------------------------------

    def is_running(self, agent_id: str) -> bool:
        """Whether that child runs now (a resume must wait)."""
        return agent_id in self._running

    def known(self, agent_id: str) -> bool:
        """Whether a child with this id ran in this session (any process, any parent)."""
        return self.parent_of(agent_id) is not None

    def parent_of(self, agent_id: str) -> str | None:
        """Who started that child (None: no such child in this session)."""
        record = self._slot.get().children.get(agent_id)
        return record.parent if record is not None else None

    def profile_of(self, agent_id: str) -> str | None:
        """That child's type (None: no such child)."""
        record = self._slot.get().children.get(agent_id)
        return record.profile if record is not None else None

    # -- running -----------------------------------------------------------------------

    async def run(self, spec: ChildSpec, cancel: CancelToken) -> ChildOutcome:
        """Run the child's turn to its end, within its timeout and until `cancel`."""
        if spec.agent_id in self._running:
            return self._failed(
                spec,
                f'Agent instance "{spec.agent_id}" is already running and cannot run concurrently.',
            )
        self._running.add(spec.agent_id)
        try:
            try:
                child = await self._child(spec)
            except DeftlyError as exc:
                return self._failed(spec, str(exc))
            return await self._drive(child, spec, cancel)
        finally:
            self._running.discard(spec.agent_id)

    async def aclose(self) -> None:
        """Close the children's loops (their scopes close with the parent's scope)."""
        children, self._children = list(self._children.values()), {}
        for child in children:
            with contextlib.suppress(Exception):
                await child.agent.aclose()

    async def _child(self, spec: ChildSpec) -> _Child:
        known = self._children.get(spec.agent_id)
        if known is not None:
            return known
        record = self._slot.get().children.get(spec.agent_id)
        profile = child_profile(spec, record, self.scope)
        async with self._lock:
            scope = self.scope.child(spec.agent_id)
            if scope is None:
                scope = await self.scope.spawn_child(
                    spec.agent_id, Profile(profile.tools, profile.disallowed_tools)
                )
        child = _Child(self._new_agent(scope, profile), profile)
        self._children[spec.agent_id] = child
        if record is None:
            entry = ChildRecord(
                parent=self.scope.agent_id, profile=profile.name, description=spec.description
            )
            self._slot.update(
                lambda state: state.model_copy(
                    update={"children": {**state.children, spec.agent_id: entry}}
                )
            )
        return child

    def _new_agent(self, scope: AgentRuntime, profile: AgentProfile) -> Agent:
        from deftly.agent.agent import Agent

        config = scope.session.config.agents
        provider = self.parent.provider if profile.model is None else _own_provider(scope, profile)
        delegates = self.depth + 1 < config.max_depth and profile_delegates(profile, scope)
        return Agent(
            ChildScope(scope),
            provider,
            model=profile.model,
            max_steps=config.max_steps or None,
            system_prompt=child_prompt(self.parent.system_prompt, profile),
            resume=True,
            depth=self.depth + 1,
            delegates=delegates,
            close_provider=profile.model is not None,
        )

    async def _drive(self, child: _Child, spec: ChildSpec, cancel: CancelToken) -> ChildOutcome:
        agent_id, profile = spec.agent_id, child.profile
        relay = self.parent.relay
        turn_id = self.parent.turn_id
        relay(
            ev.SubagentStarted(
                agent_id,
                turn_id,
                self.scope.agent_id,
                profile.name,
                spec.description,
                spec.prompt,
                resumed=spec.resume,
                background=bool(spec.settings.get("background")),
            )
        )
        _inherit_plan_mode(self.scope, child.agent.scope)
        token = CancelToken()
        timed_out = asyncio.Event()
        watchers = [asyncio.ensure_future(_pass_on(cancel, token))]
        if spec.timeout is not None:
            watchers.append(asyncio.ensure_future(_clock(spec.timeout, token, timed_out)))
        end: ev.TurnEnded | None = None
        crash: str | None = None
        try:
            async for event in child.agent.stream(spec.prompt, cancel=token):
                if isinstance(event, ev.TurnEnded) and event.agent_id == agent_id:
                    end = event
                elif not isinstance(event, FORWARDED_NOT):
                    relay(event)
        except Exception as exc:  # a bug in the child's loop must not take the parent down
            log.warning("sub-agent %s failed: %s", agent_id, exc)
            log.debug("the sub-agent's failure", exc_info=True)
            crash = f"The sub-agent failed unexpectedly: {type(exc).__name__}: {exc}"
        finally:
            for watcher in watchers:
                watcher.cancel()
        outcome = self._outcome(spec, profile, end, crash, timed_out.is_set(), cancel)
        relay(
            ev.SubagentEnded(
                agent_id,
                turn_id,
                self.scope.agent_id,
                profile.name,
                outcome.status,
                outcome.text,
                dict(end.usage_by_agent or {agent_id: end.usage}) if end is not None else {},
                outcome.error,
            )
        )
        return outcome

    def _outcome(
        self,
        spec: ChildSpec,
        profile: AgentProfile,
        end: ev.TurnEnded | None,
        crash: str | None,
        timed_out: bool,
        cancel: CancelToken,
    ) -> ChildOutcome:
        path = str(transcript_path(self.scope.session.session_dir, spec.agent_id))
        return turn_outcome(spec, profile, end, crash, timed_out, cancel, path)

    def _failed(self, spec: ChildSpec, message: str) -> ChildOutcome:
        return ChildOutcome(spec.agent_id, spec.profile.name, "failed", error=message)


def child_profile(spec: ChildSpec, record: ChildRecord | None, scope: AgentRuntime) -> AgentProfile:
    """The child's type: the spec's, or for a resume the one it had (DeftlyError when the
    child does not exist, is another parent's, or its type is gone). Every backend's rule."""
    if not spec.resume:
        return spec.profile
    if record is None:
        raise DeftlyError(f'Agent instance "{spec.agent_id}" does not exist.')
    if record.parent != scope.agent_id:
        raise DeftlyError(f'Agent instance "{spec.agent_id}" does not belong to this parent agent.')
    stored = scope.subagents.profile(record.profile)
    if stored is None:
        raise DeftlyError(
            f'Agent instance "{spec.agent_id}" was a "{record.profile}" agent, and '
            "that agent type is not defined any more; start a new agent instead."
        )
    return stored


def turn_outcome(
    spec: ChildSpec,
    profile: AgentProfile,
    end: ev.TurnEnded | None,
    crash: str | None,
    timed_out: bool,
    cancel: CancelToken,
    path: str | None,
) -> ChildOutcome:
    """A child's outcome from how its turn ended (`end`; None when it never ended: `crash`
    says why), whether its clock ran out, its parent's `cancel` (who stopped it) and its
    transcript's `path`: one wording of an ending for every backend."""
    if end is None:
        return ChildOutcome(
            spec.agent_id,
            profile.name,
            "failed",
            error=crash or "The sub-agent ended without finishing its turn.",
            transcript=path,
        )
    total = end.total_usage
    status: ChildStatus = "completed"
    error: str | None = None
    if end.stop_reason == "cancelled":
        if timed_out:
            status = "timed_out"
            error = f"Agent timed out after {spoken_duration(spec.timeout or 0)}."
        else:
            status = "cancelled"
            reason = cancel.reason if cancel.cancelled else None
            error = (
                "The subagent was stopped before it finished by user."
                if cancel.by_user
                else "The subagent was stopped before it finished."
                + (f" Reason: {reason}" if reason else "")
            )
    elif end.stop_reason == "max_steps":
        status = "failed"
        error = (
            f"The subagent stopped after {end.steps} step{'s' if end.steps != 1 else ''} "
            "(its step limit) before finishing; resume it to let it go on."
        )
    elif end.stop_reason in ("error", "budget"):
        status = "failed"
        error = end.error or "The subagent's model request failed."
    return ChildOutcome(
        spec.agent_id,
        profile.name,
        status,
        text=end.text,
        error=error,
        steps=end.steps,
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        transcript=path,
    )


def _own_provider(scope: AgentRuntime, profile: AgentProfile) -> ChatProvider:
    """The model a profile names, resolved like `--model NAME` (a `[models.NAME]` profile,
    else a model id over `[model]`); a DeftlyError saying why when it cannot be used."""
    from deftly.agent.models import ModelError, make_provider, resolve_model

    try:
        return make_provider(resolve_model(scope.session.config, profile.model))
    except ModelError as exc:
        raise DeftlyError(
            f'The "{profile.name}" agent type names the model "{profile.model}", which '
            f"cannot be used here: {exc.message}"
        ) from None


def _inherit_plan_mode(parent: AgentRuntime, child: AgentRuntime) -> None:
    """A child of a planning agent plans too (it may write only its own plan file), so
    delegating never gets around plan mode."""
    from deftly.features.plan.mode import PlanMode

    planning = parent.services.find(PlanMode)
    own = child.services.find(PlanMode)
    if planning is not None and planning.active and own is not None and not own.active:
        own.enter()


async def _pass_on(cancel: CancelToken, token: CancelToken) -> None:
    """The parent's call was cancelled: so is the child's turn (as the same person)."""
    await cancel.wait()
    token.cancel(cancel.reason or "the parent's call was cancelled", by_user=cancel.by_user)


async def _clock(seconds: float, token: CancelToken, timed_out: asyncio.Event) -> None:
    """The child ran out of time: its turn is cancelled (a resume goes on from there)."""
    await asyncio.sleep(seconds)
    timed_out.set()
    token.cancel("timed out")
