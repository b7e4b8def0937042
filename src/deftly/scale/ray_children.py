"""The Ray sub-agent backend: each child's turn is a Ray task, so a big swarm spreads over
the cluster (`[agents] backend = "ray"`).

The parent keeps everything a session knows about its children: which agent started which
child (the same record as the local backend's, so `known`, ownership and a resume work,
even after a restart or on the other backend), the child's transcript (returned by the
task and written to the parent's session), and the events its stream shows
(`SubagentStarted` when the task is submitted, `SubagentEnded` with the child's tokens
when it reports; the child's own steps are not streamed back). The task itself is
`deftly.scale.children_task`: what it is sent, and how approvals and cancellation work
there.

Ray is met through `deftly.scale.cluster.ray_session` the first time a child runs (an
already initialised Ray is used as it is); a cluster that cannot be reached fails that
child, saying why. A child is never retried by Ray (it may have changed files): a worker
that dies fails the child, and a resume goes on from its transcript. Cancelling the
parent's call cancels the task (`ray.cancel`), which stops the child's turn and its
processes; a task that does not report within `CANCEL_GRACE` seconds is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deftly.agent import events as ev
from deftly.agent.children import (
    STATE_KEY,
    ChildRecord,
    ChildrenFactory,
    ChildrenState,
    child_profile,
    child_prompt,
    turn_outcome,
)
from deftly.agent.transcript import transcript_path
from deftly.config.agents import AgentsConfig
from deftly.contract.errors import DeftlyError
from deftly.contract.tool import CancelToken
from deftly.providers.types import Usage
from deftly.runtime.agent_runtime import AgentRuntime
from deftly.scale.children_model import forwarded_env, settings_of
from deftly.scale.children_probe import check_reachable
from deftly.scale.children_task import ChildReport, ChildTask, run_child_task
from deftly.scale.cluster import RayUnavailable, ray_session
from deftly.session.subagents import AgentProfile, ChildOutcome, ChildSpec

if TYPE_CHECKING:
    from deftly.agent.agent import Agent

log = logging.getLogger(__name__)

CANCEL_GRACE = 30.0
"""Seconds a cancelled child's task has to end its turn and report before it is killed."""


class RayChildren:
    """A `ChildBackend` that runs each child's turn as a Ray task."""

    def __init__(
        self,
        parent: Agent,
        scope: AgentRuntime,
        depth: int,
        *,
        address: str | None = None,
        num_cpus: float = 1,
    ) -> None:
        self.parent = parent
        self.scope = scope
        self.depth = depth
        self.address = address
        self.num_cpus = num_cpus
        self._running: set[str] = set()
        self.placed: dict[str, str] = {}
        """The Ray node each child's last run reported from (by agent id)."""
        self._slot = scope.session.store.slot(STATE_KEY, ChildrenState)
        self._ray: Any = None
        self._remote: Any = None
        self._session: contextlib.ExitStack | None = None
        self._connecting = asyncio.Lock()

    # -- what the tools ask ------------------------------------------------------------

    def is_running(self, agent_id: str) -> bool:
        """Whether that child's task runs now (a resume must wait)."""
        return agent_id in self._running

    def known(self, agent_id: str) -> bool:
        """Whether a child with this id ran in this session (on any backend)."""
        return agent_id in self._slot.get().children

    def profile_of(self, agent_id: str) -> str | None:
        """That child's type (None: no such child)."""
        record = self._slot.get().children.get(agent_id)
        return record.profile if record is not None else None

    # -- running -----------------------------------------------------------------------

    async def run(self, spec: ChildSpec, cancel: CancelToken) -> ChildOutcome:
        """Run the child's turn as a Ray task, until it reports or `cancel` fires."""
        if spec.agent_id in self._running:
            return _failed(
                spec,
                f'Agent instance "{spec.agent_id}" is already running and cannot run concurrently.',
            )
        self._running.add(spec.agent_id)
        try:
            try:
                profile = self._profile(spec)
                task = self._task(spec, profile)
            except DeftlyError as exc:
                return _failed(spec, str(exc))
            self._record(spec, profile)
            return await self._drive(spec, profile, task, cancel)
        finally:
            self._running.discard(spec.agent_id)

    async def aclose(self) -> None:
        """Let go of Ray (a local instance this backend started stops)."""
        session, self._session = self._session, None
        self._ray = self._remote = None
        if session is not None:
            await asyncio.to_thread(session.close)

    def _profile(self, spec: ChildSpec) -> AgentProfile:
        """The child's type: the spec's, or for a resume the one it had."""
        return child_profile(spec, self._slot.get().children.get(spec.agent_id), self.scope)

    def _task(self, spec: ChildSpec, profile: AgentProfile) -> ChildTask:
        session = self.scope.session
        config = session.config
        earlier = transcript_path(session.session_dir, spec.agent_id)
        return ChildTask(
            spec=spec if spec.profile == profile else _with_profile(spec, profile),
            workspace=spec.workspace or str(session.workspace_path),
            config=config.model_dump(mode="json"),
            mode=str(session.permissions.mode),
            trusted=session.trusted,
            approve_asks=self.scope.gate.approve_asks,
            plugins=session.options.plugins,
            system_prompt=child_prompt(self.parent.system_prompt, profile),
            model=settings_of(self.parent.provider) if profile.model is None else None,
            max_steps=config.agents.max_steps or None,
            depth=self.depth + 1,
            parent_tools=tuple(entry.name for entry in self.scope.registry.entries()),
            planning=_planning(self.scope),
            transcript=earlier.read_text(encoding="utf-8")
            if spec.resume and earlier.exists()
            else "",
        )

    def _record(self, spec: ChildSpec, profile: AgentProfile) -> None:
        if spec.agent_id in self._slot.get().children:
            return
        entry = ChildRecord(
            parent=self.scope.agent_id, profile=profile.name, description=spec.description
        )
        self._slot.update(
            lambda state: state.model_copy(
                update={"children": {**state.children, spec.agent_id: entry}}
            )
        )

    async def _drive(
        self, spec: ChildSpec, profile: AgentProfile, task: ChildTask, cancel: CancelToken
    ) -> ChildOutcome:
        relay, turn_id = self.parent.relay, self.parent.turn_id
        relay(
            ev.SubagentStarted(
                spec.agent_id,
                turn_id,
                self.scope.agent_id,
                profile.name,
                spec.description,
                spec.prompt,
                resumed=spec.resume,
                background=bool(spec.settings.get("background")),
            )
        )
        report = await self._report(spec, task, cancel)
        if report.node:
            self.placed[spec.agent_id] = report.node
        path = transcript_path(self.scope.session.session_dir, spec.agent_id)
        if report.transcript:
            await asyncio.to_thread(_write, path, report.transcript)
        outcome = turn_outcome(
            spec, profile, report.end, report.crash, report.timed_out, cancel, str(path)
        )
        end = report.end
        relay(
            ev.SubagentEnded(
                spec.agent_id,
                turn_id,
                self.scope.agent_id,
                profile.name,
                outcome.status,
                outcome.text,
                dict(end.usage_by_agent or {spec.agent_id: end.usage}) if end is not None else {},
                outcome.error,
            )
        )
        return outcome

    async def _report(self, spec: ChildSpec, task: ChildTask, cancel: CancelToken) -> ChildReport:
        """The task's report; Ray's failures (no cluster, a dead worker, a cancelled task)
        as a report the parent can word."""
        try:
            ray, remote = await self._connect()
        except RayUnavailable as exc:
            return ChildReport(
                None,
                crash=f"The Ray backend cannot run sub-agents: {exc} Or set "
                '[agents] backend = "local" to run them on this machine.',
            )
        env = forwarded_env(task.model) if task.model is not None else {}
        options: dict[str, Any] = {
            "num_cpus": self.num_cpus,
            "max_retries": 0,
            "name": f"deftly sub-agent {spec.agent_id}",
        }
        if env:
            options["runtime_env"] = {"env_vars": env}
        ref = remote.options(**options).remote(task)
        try:
            return await _await(ray, ref, cancel, spec)
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)
            raise

    async def _connect(self) -> tuple[Any, Any]:
        """Ray and the child task's remote function, connecting the first time."""
        async with self._connecting:
            if self._remote is None:
                await asyncio.to_thread(check_reachable, self.address)
                stack = contextlib.ExitStack()
                ray = await asyncio.to_thread(
                    stack.enter_context, ray_session(self.address, namespace="deftly")
                )
                self._session = stack
                self._ray = ray
                self._remote = ray.remote(run_child_task)
            return self._ray, self._remote


async def _await(ray: Any, ref: Any, cancel: CancelToken, spec: ChildSpec) -> ChildReport:
    """Wait for the task, cancelling it (then killing it after the grace) when `cancel`
    fires."""
    done = asyncio.ensure_future(_result(ref))
    stop = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({done, stop}, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            ray.cancel(ref, force=False)
            finished, _ = await asyncio.wait({done}, timeout=CANCEL_GRACE)
            if not finished:
                ray.cancel(ref, force=True)
    finally:
        stop.cancel()
    try:
        return await done
    except Exception as exc:
        return _ray_failure(ray, exc, spec, cancel)


async def _result(ref: Any) -> ChildReport:
    report = await ref
    if not isinstance(report, ChildReport):
        raise TypeError(f"the Ray task returned {type(report).__name__}, not a ChildReport")
    return report


def _ray_failure(ray: Any, exc: Exception, spec: ChildSpec, cancel: CancelToken) -> ChildReport:
    """A report for a task Ray could not finish: cancelled (an empty cancelled turn), or
    a failure that says what happened and what to do."""
    cancelled = getattr(ray.exceptions, "TaskCancelledError", ())
    if cancel.cancelled or isinstance(exc, cancelled):
        end = ev.TurnEnded(spec.agent_id, "", "cancelled", "", 0, Usage(), spec.session_id)
        return ChildReport(end)
    log.warning("the Ray task of sub-agent %s failed: %s", spec.agent_id, exc)
    died = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError)
    if isinstance(exc, died):
        what = "The Ray worker running the sub-agent died before it finished"
    else:
        lines = str(exc).strip().splitlines()
        detail = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        what = f"The sub-agent's Ray task failed ({detail})"
    return ChildReport(None, crash=f"{what}; resume it to go on from its last saved step.")


def _with_profile(spec: ChildSpec, profile: AgentProfile) -> ChildSpec:
    return replace(spec, profile=profile)


def _planning(scope: AgentRuntime) -> bool:
    from deftly.features.plan.mode import PlanMode

    planning = scope.services.find(PlanMode)
    return planning is not None and planning.active


def _failed(spec: ChildSpec, message: str) -> ChildOutcome:
    return ChildOutcome(spec.agent_id, spec.profile.name, "failed", error=message)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def ray_children(address: str | None = None, *, num_cpus: float = 1) -> ChildrenFactory:
    """A factory for `Agent(children_backend=...)`: the agent's children on Ray."""

    def make(parent: Agent, scope: AgentRuntime, depth: int) -> RayChildren:
        return RayChildren(parent, scope, depth, address=address, num_cpus=num_cpus)

    return make


def children_backend(config: AgentsConfig) -> ChildrenFactory | None:
    """The backend `[agents]` asks for: None for the local one (the Agent's default), the
    Ray factory for `backend = "ray"`. Every host that builds an Agent (`deftly run`, the
    rollout runner, a library user) passes this on, so they all behave the same."""
    if config.backend != "ray":
        return None
    return ray_children(config.ray_address, num_cpus=config.ray_num_cpus)
