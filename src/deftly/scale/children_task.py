"""One sub-agent's turn as a Ray task: what it is sent, what it sends back, and the function
a Ray worker runs.

A child on Ray is not a scope of its parent's session: the worker opens the same workspace
(the same path: on one machine it is the same folder; on a cluster the workspace must be
on storage every node mounts at that path) with a private session in a temporary home,
the parent's configuration, permission mode and trust, and runs the child's `Agent` for
one turn. Its transcript travels both ways (sent for a resume, returned at the end) so the
parent's session keeps it, and a resume works on any node, or on the local backend.

No person can be asked from a worker: an ask is refused (`NonInteractiveApprover`: the
refusal says how to allow the call), unless the parent approves asks (`--yes`), and tools
that put questions to a person are not offered (there is no answerer). The parent's
session approvals stay with the parent.

Cancellation arrives as Ray's `ray.cancel` (SIGINT in the worker's main thread): it
cancels the child's turn the way a user does, so its processes stop with it and the turn's
end is still reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from deftly.agent import events as ev
from deftly.config.models import ModelSettings
from deftly.contract.records import frozen
from deftly.contract.stack import with_stack_room
from deftly.contract.tool import CancelToken
from deftly.session.subagents import ChildSpec

CANCELLED = "the parent's call was cancelled"


@frozen
class ChildTask:
    """Everything a worker needs for one child's turn, as plain data (no secret)."""

    spec: ChildSpec
    workspace: str
    config: Mapping[str, Any]
    """The parent's configuration in effect (`DeftlyConfig.model_dump(mode="json")`)."""
    mode: str
    trusted: bool
    approve_asks: bool
    plugins: bool
    system_prompt: str
    model: ModelSettings | None
    """The parent's model (None: the profile's `model`, resolved in the worker)."""
    max_steps: int | None
    depth: int
    """The child's depth (1: a child of the main agent)."""
    parent_tools: tuple[str, ...] | None = None
    """The parent's tools (the child's are its profile's within these)."""
    planning: bool = False
    """The parent is in plan mode, so the child plans too."""
    transcript: str = ""
    """The child's earlier transcript (JSONL) for a resume."""


@frozen
class ChildReport:
    """How the child's turn went, sent back to the parent."""

    end: ev.TurnEnded | None
    crash: str | None = None
    timed_out: bool = False
    transcript: str = ""
    node: str = ""
    """The Ray node it ran on (for the log)."""


def run_child_task(task: ChildTask) -> ChildReport:
    """The Ray task: run the child's turn in a fresh event loop of this worker."""
    return with_stack_room(asyncio.run, _run(task))


async def _run(task: ChildTask) -> ChildReport:
    token = CancelToken()
    with _sigint_cancels(token), tempfile.TemporaryDirectory(prefix="deftly-child-") as home:
        try:
            return await _turn(task, token, Path(home))
        except Exception as exc:  # the parent reports it as the child's failure
            crash = f"The sub-agent failed on its Ray worker: {type(exc).__name__}: {exc}"
            return ChildReport(None, crash=crash)


async def _turn(task: ChildTask, token: CancelToken, home: Path) -> ChildReport:
    from deftly.agent.agent import Agent
    from deftly.agent.children import profile_delegates
    from deftly.agent.models import ModelError, make_provider, resolve_model
    from deftly.agent.scope import ChildScope
    from deftly.agent.transcript import transcript_path
    from deftly.policy.approval import NonInteractiveApprover
    from deftly.registry.activation import Profile
    from deftly.runtime.facade import Runtime

    spec, profile = task.spec, task.spec.profile
    runtime = Runtime(
        task.workspace,
        mode=task.mode,
        config=dict(task.config),
        profile=Profile(task.parent_tools) if task.parent_tools is not None else None,
        plugins=task.plugins,
        home=home,
        session_id=spec.session_id or None,
        approve_asks=task.approve_asks,
        approver=NonInteractiveApprover(),
        trust=task.trusted,
    )
    async with runtime:
        scope = await runtime.agent.spawn_child(
            spec.agent_id, Profile(profile.tools, profile.disallowed_tools)
        )
        path = transcript_path(runtime.session_dir, spec.agent_id)
        if task.transcript:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(task.transcript, encoding="utf-8")
        if task.planning:
            _enter_plan_mode(scope)
        try:
            settings = task.model or resolve_model(runtime.config, profile.model)
            provider = make_provider(settings)
        except ModelError as exc:
            return ChildReport(None, crash=f"The sub-agent's model cannot be used: {exc.message}")
        delegates = task.depth < runtime.config.agents.max_depth and profile_delegates(
            profile, scope
        )
        agent = Agent(
            ChildScope(scope),
            provider,
            max_steps=task.max_steps,
            system_prompt=task.system_prompt,
            resume=True,
            depth=task.depth,
            delegates=delegates,
        )
        timed_out = asyncio.Event()
        clock = (
            asyncio.ensure_future(_clock(spec.timeout, token, timed_out))
            if spec.timeout is not None
            else None
        )
        end: ev.TurnEnded | None = None
        try:
            async for event in agent.stream(spec.prompt, cancel=token):
                if isinstance(event, ev.TurnEnded) and event.agent_id == spec.agent_id:
                    end = event
        finally:
            if clock is not None:
                clock.cancel()
            await agent.aclose()
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    return ChildReport(end, timed_out=timed_out.is_set(), transcript=text, node=_node())


def _enter_plan_mode(scope: Any) -> None:
    from deftly.features.plan.mode import PlanMode

    own = scope.services.find(PlanMode)
    if own is not None and not own.active:
        own.enter()


async def _clock(seconds: float, token: CancelToken, timed_out: asyncio.Event) -> None:
    """The child ran out of time: its turn is cancelled (a resume goes on from there)."""
    await asyncio.sleep(seconds)
    timed_out.set()
    token.cancel("timed out")


@contextlib.contextmanager
def _sigint_cancels(token: CancelToken) -> Iterator[None]:
    """While the block runs, SIGINT (how `ray.cancel` reaches a task) cancels `token`
    instead of raising in the middle of the loop."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()

    def cancel(*_: object) -> None:
        loop.call_soon_threadsafe(token.cancel, CANCELLED)

    previous = signal.signal(signal.SIGINT, cancel)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _node() -> str:
    with contextlib.suppress(Exception):
        import ray

        return str(ray.get_runtime_context().get_node_id())
    return ""
