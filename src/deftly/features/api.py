"""What a feature is: one capability in one folder, and the contexts the runtime gives it.

A feature declares its name, its tools (one `ToolContribution` per `<tool>.py` +
`<tool>.md` in its folder), optionally its config section, and two lifecycle steps:

- `start_session(ctx: SessionContext)`: session-wide services (a file tracker,
  background tasks, MCP connections, a skill service), offered by type in
  `ctx.services`, shared by every agent of the session;
- `start_agent(ctx: AgentContext)`: one agent's services, hooks, executor guards,
  injection sources and state (plan mode), in that agent's scope.

Both register what must be undone with `ctx.on_close(...)`; closing runs it newest
first, and a restart runs both steps again on fresh scopes. A feature is handed typed
contexts, never the runtime: what it may touch is what the context offers. A feature
that needs another feature's service asks for a small protocol (declared in a lower
layer or in the providing feature's public module) by type through the scope.

Every feature may import this module; a feature never imports another feature.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TypeVar

from deftly.config.base import Section
from deftly.config.model import DeftlyConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.env.base import ExecEnv
from deftly.execution.events import EventBus
from deftly.execution.executor import Executor, Guard, MissingDescriber
from deftly.execution.hooks import AfterHook, BeforeHook, HookChain
from deftly.execution.permission_gate import PermissionGate
from deftly.policy.paths import Workspace
from deftly.policy.permissions import Mode, PermissionEngine
from deftly.registry.contribution import ToolContribution
from deftly.registry.offer import NOTHING_OFFERED, ToolOffer
from deftly.registry.registry import Source, ToolRegistry
from deftly.registry.services import Services
from deftly.session.inbox import Inbox
from deftly.session.injections import Injections
from deftly.session.questions import QuestionDesk
from deftly.session.store import StateStore
from deftly.session.subagents import SubagentDesk
from deftly.session.turns import LoopHooks

log = logging.getLogger(__name__)

T = TypeVar("T")

Closer = Callable[[], Awaitable[None]]
"""Undoes what a lifecycle step did (stops a process, removes a hook...)."""


class Closers:
    """A stack of close callbacks, run newest first; one that fails is logged and the rest
    still run."""

    def __init__(self) -> None:
        self._stack: list[Closer] = []

    def add(self, closer: Closer) -> None:
        """Run `closer` at the next `close_all()`."""
        self._stack.append(closer)

    def add_sync(self, undo: Callable[[], object]) -> None:
        """Run a plain function (a hook's remover, say) at the next `close_all()`."""

        async def run() -> None:
            undo()

        self._stack.append(run)

    async def close_all(self) -> None:
        """Run every callback, newest first, and forget them."""
        while self._stack:
            closer = self._stack.pop()
            try:
                await closer()
            except Exception:
                log.exception("error while closing")


@frozen
class RunOptions:
    """What the host said about how it will use the runtime (set before `start()`)."""

    background: bool = True
    """Whether work may go on after a call returns (background shell tasks)."""
    only_tools: frozenset[str] | None = None
    """The only tools the caller will call (None: any), so a feature may start less (the
    MCP feature starts only the servers of these tools)."""
    plugins: bool = True
    """Whether installed packages may contribute (tools, skills)."""
    connect_in_background: bool = False
    """Whether `start()` may return before slow connections are made (mounted MCP servers):
    their tools then appear later, announced by a change event (a long-lived server)."""


@dataclass(eq=False)
class SessionContext:
    """What a feature's session step may use: one session of one workspace."""

    config: DeftlyConfig
    env: ExecEnv
    workspace: Workspace
    """The path policy; a feature may add directories to it (its logs, its roots)."""
    session_id: str
    session_dir: Path
    """The session directory on this machine (claimed while the session is open)."""
    session_area: Path
    """The same directory as the environment sees it: put files the model may read
    back through the env (logs, spill files) here."""
    events: EventBus
    services: Services
    """The session scope: what is provided here is shared by every agent."""
    registry: ToolRegistry
    """Tools mounted once per session (MCP): every agent's registry layers over it."""
    permissions: PermissionEngine
    """The session's permission engine (mode, rules, session approvals)."""
    diagnostics: list[Diagnostic]
    trusted: bool
    """Whether the workspace's own config may run programs and widen permissions."""
    options: RunOptions
    closers: Closers = field(default_factory=Closers)
    store: StateStore = field(default_factory=lambda: StateStore(None))
    """The session's state store: what a feature keeps here (`store.slot(key, Model)`)
    outlives the process, and a resumed session (`Runtime(session_id=...)`) reads it back."""

    @property
    def workspace_path(self) -> Path:
        """The workspace's root directory."""
        return self.workspace.root

    _alongside: list[asyncio.Task[None]] = field(default_factory=list, repr=False)

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when the session scope closes (newest first)."""
        self.closers.add(closer)

    def alongside(self, work: Coroutine[object, object, None]) -> None:
        """Run `work` while the later features take their session steps (a probe that waits
        on another process); the session is ready only once it is done, and its failure
        fails the start as the step's own would."""
        self._alongside.append(asyncio.ensure_future(work))

    async def finish_alongside(self, *, cancel: bool = False) -> None:
        """Wait for the work started `alongside`, in order; a failure (or a cancelled wait)
        cancels the rest. `cancel`: stop it all instead (the start failed)."""
        pending, self._alongside = self._alongside, []
        if cancel:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            return
        try:
            for task in pending:
                await task
        finally:
            for task in pending:
                task.cancel()


@dataclass(eq=False)
class AgentContext:
    """What a feature's agent step may use: one agent of the session."""

    session: SessionContext
    identity: Identity
    services: Services
    """The agent scope (its parent is the session scope)."""
    registry: ToolRegistry
    before_hooks: HookChain[BeforeHook]
    after_hooks: HookChain[AfterHook]
    gate: PermissionGate
    """This agent's permission gate (its grants are this agent's)."""
    injections: Injections
    """What this agent's model must hear at its next turn."""
    is_switched_on: Callable[[str, Source], bool]
    """Whether the tool policy and this agent's profile let a tool be used."""
    executor: Executor = field(repr=False)
    closers: Closers = field(default_factory=Closers)
    loop: LoopHooks = field(default_factory=LoopHooks)
    """This agent's turn budgets, turn listeners and compaction state (used when an agent
    loop drives it)."""
    inbox: Inbox = field(default_factory=Inbox)
    """Prompts that arrive on their own (a cron job firing): run when the agent is idle."""
    questions: QuestionDesk = field(default_factory=QuestionDesk)
    """Who answers this agent's questions for the person (maybe nobody)."""
    offer: ToolOffer = NOTHING_OFFERED
    """The tools this agent's model is offered now."""
    subagents: SubagentDesk = field(default_factory=SubagentDesk)
    """This agent's sub-agent profiles and the backend that runs them (maybe none)."""

    @property
    def agent_id(self) -> str:
        """This agent's id (`"main"` for a session's first agent)."""
        return self.identity.agent_id

    @property
    def mode(self) -> Mode:
        """The session's permission mode now."""
        return self.session.permissions.mode

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when this agent scope closes (newest first)."""
        self.closers.add(closer)

    def add_guard(self, guard: Guard) -> None:
        """Ask `guard` in every call's preflight (a refusal text, or None); removed at close."""
        self.executor.guards.append(guard)
        self.closers.add_sync(lambda: _discard(self.executor.guards, guard))

    def add_missing(self, describer: MissingDescriber) -> None:
        """Let `describer` explain an unknown tool name; removed at close."""
        self.executor.missing.append(describer)
        self.closers.add_sync(lambda: _discard(self.executor.missing, describer))


def _discard(items: list[T], item: T) -> None:
    """Remove `item` from `items` if it is still there."""
    if item in items:
        items.remove(item)


class Feature:
    """One capability. Subclass it in `<name>/feature.py`, override what the feature
    needs, and add the instance to `deftly.features.BUILTIN_FEATURES` (or pass it in
    `Runtime(features=...)`)."""

    name: ClassVar[str] = ""
    contributions: ClassVar[Sequence[ToolContribution]] = ()
    """The feature's tools, one contribution per `<tool>.py` + `<tool>.md`."""
    config_tables: ClassVar[dict[str, type[Section]]] = {}
    """Config tables this feature brings (table name -> its model), validated by the
    loader and read with `DeftlyConfig.section(model)`."""

    async def start_session(self, ctx: SessionContext) -> None:
        """Provide session-wide services in `ctx.services` (default: nothing)."""

    async def start_agent(self, ctx: AgentContext) -> None:
        """Provide one agent's services, hooks and guards (default: nothing)."""


def feature_tables(features: Collection[Feature]) -> dict[str, type[Section]]:
    """Every config table of `features` (table name -> its model), for the loader."""
    return {name: model for feature in features for name, model in feature.config_tables.items()}


def feature_contributions(features: Collection[Feature]) -> list[ToolContribution]:
    """Every tool of `features`, in their order."""
    return [contribution for feature in features for contribution in feature.contributions]
