"""An agent scope: one agent of a session, with its own tools, hooks and state.

Its registry layers over the session's (MCP tools mounted once appear in every agent's),
its services over the session's (a child shares the session's background tasks, MCP
connections and skills, and has its own plan mode, disclosure state and injections). Its
permission gate acts on the session's engine: one mode, one rule book, one set of
session approvals for every agent.

A child agent (`spawn_child`) is a new agent scope in the same session. Its tools are its
profile's intersected with its parent's, so it never has a tool its parent lacks; its
policy is its parent's narrowed by its profile, so it never gets wider permissions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from deftly.config.loader import LoadedConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.identity import Identity
from deftly.contract.traits import traits_of
from deftly.execution.calls import CallResult, ToolCall
from deftly.execution.executor import Executor
from deftly.execution.external_hooks import CommandHook, ExternalHooks
from deftly.execution.hooks import AfterHook, BeforeHook, HookChain
from deftly.execution.notices import TASK_FINISHED_KIND
from deftly.execution.permission_gate import PermissionGate
from deftly.execution.spill import Spiller
from deftly.features.api import AgentContext, Closer, Closers, Feature
from deftly.policy.approval import Approver
from deftly.policy.permissions import Mode
from deftly.policy.tool_policy import ToolPolicy, find_inactive_patterns
from deftly.registry.activation import Activation, Profile, known_names
from deftly.registry.contribution import ToolContribution
from deftly.registry.offer import ToolOffer
from deftly.registry.registry import RegisteredTool, Source, ToolRegistry
from deftly.registry.services import Services
from deftly.runtime.session_runtime import SessionRuntime
from deftly.session.inbox import Inbox
from deftly.session.injections import Injection, Injections
from deftly.session.questions import QuestionDesk
from deftly.session.subagents import SubagentDesk
from deftly.session.tasks import TaskBoard
from deftly.session.turns import LoopHooks

log = logging.getLogger(__name__)

SwitchedOn = Callable[[str, Source], bool]


NOBODY_ANSWERS = (
    'Tool "{name}" is not available: nobody can answer questions here ({why}). Decide '
    "yourself, say in your reply what you assumed, or ask in your reply."
)
NO_SUBAGENTS = (
    'Tool "{name}" is not available: sub-agents run only where an agent loop drives this '
    "agent (`deftly run`, `deftly.Agent` in Python). Do the work yourself."
)
NOTHING_CONSUMES = (
    'Tool "{name}" is not available: nothing here runs the prompts it schedules (they run '
    "in an interactive `deftly run`, `deftly run --watch` or `deftly serve`)."
)


def switched_off_text(name: str) -> str:
    """What the model is told about a tool the policy or the profile switched off."""
    return (
        f'Tool "{name}" is switched off by the tool policy ([tools] enabled/disabled or the '
        "profile). Use another tool, or ask the user to enable it."
    )


class AgentRuntime:
    """One agent of a session: registry, profile, tool policy, hooks, gate, executor,
    injections, and its features' agent services. Its attributes exist from
    construction; `start()` runs every feature's agent step and activates the tools,
    `close()` undoes both (a later `start()` builds them afresh)."""

    def __init__(
        self,
        session: SessionRuntime,
        identity: Identity,
        *,
        profile: Profile | None = None,
        parent: AgentRuntime | None = None,
        approver: Approver | None = None,
        approve_asks: bool = False,
        questions: QuestionDesk | None = None,
    ) -> None:
        self.session = session
        self.identity = identity
        self.profile = profile or Profile()
        self.parent = parent
        config = session.config
        self.policy = ToolPolicy.from_lists(config.tools.enabled, config.tools.disabled)
        self.registry = ToolRegistry(parent=session.registry)
        self.services = Services(parent=session.services)
        self.before_hooks: HookChain[BeforeHook] = HookChain()
        self.after_hooks: HookChain[AfterHook] = HookChain()
        self.gate = PermissionGate(
            session.permissions, session.events, approver=approver, approve_asks=approve_asks
        )
        self.injections = Injections()
        self.questions = questions or QuestionDesk()
        """Who answers this agent's questions (shared with its children)."""
        self.inbox = Inbox()
        """Prompts that arrive on their own (cron), run when the agent is idle."""
        self.subagents = SubagentDesk()
        """This agent's profiles for sub-agents and the backend that runs them (set by an
        agent loop)."""
        self.offer = ToolOffer(self.offered)
        self.loop_hooks = LoopHooks()
        """What an agent loop asks (budgets) and tells (turns) this agent's features."""
        self.executor = Executor(
            self.registry,
            Spiller(session.spill_dir, session.budget(), session.env),
            session.events,
            self.before_hooks,
            self.after_hooks,
            identity=identity,
            injections=self.injections,
        )
        self.executor.guards.append(self._policy_guard)
        self.executor.missing.append(self._describe_switched_off)
        self.contributions: list[ToolContribution] = []
        """What this agent's tools were activated from (at the last `start()`)."""
        self._closers = Closers()
        self._children: list[AgentRuntime] = []
        self._started = False

    @property
    def agent_id(self) -> str:
        """This agent's id in its session."""
        return self.identity.agent_id

    @property
    def started(self) -> bool:
        """Whether the agent step ran and the tools are active."""
        return self._started

    # -- policy --------------------------------------------------------------------------

    def is_switched_on(self, name: str, source: Source) -> bool:
        """Whether the tool policy, this agent's profile and every ancestor's let the tool
        be used."""
        if self.parent is not None and not self.parent.is_switched_on(name, source):
            return False
        return self.policy.is_active(name, source) and self.profile.policy.is_active(name, source)

    def unavailable(self, entry: RegisteredTool) -> str | None:
        """Why a switched-on tool cannot be used now, by its traits (None: it can): one that
        asks the person needs someone to answer and not auto mode; one that fills the inbox
        needs something consuming it; one that delegates needs a sub-agent backend."""
        traits = traits_of(entry.tool)
        if traits is None:
            return None
        if traits.asks_user:
            if not self.questions.available:
                return NOBODY_ANSWERS.format(name=entry.name, why="no one is attached to answer")
            if self.session.permissions.mode is Mode.AUTO:
                return NOBODY_ANSWERS.format(name=entry.name, why="auto mode asks no one")
        if traits.uses_inbox and not self.inbox.consumed:
            return NOTHING_CONSUMES.format(name=entry.name)
        if traits.delegates and not self.subagents.available:
            return NO_SUBAGENTS.format(name=entry.name)
        return None

    def offered(self) -> list[RegisteredTool]:
        """The tools the model is offered now: switched on and usable, sorted by name."""
        return [
            e
            for e in self.registry.entries()
            if self.is_switched_on(e.name, e.source) and self.unavailable(e) is None
        ]

    def _policy_guard(self, call: ToolCall, entry: RegisteredTool) -> str | None:
        if not self.is_switched_on(entry.name, entry.source):
            return switched_off_text(entry.name)
        return self.unavailable(entry)

    def _describe_switched_off(self, name: str) -> str | None:
        for contribution in self.contributions:
            if contribution.name == name and not self.is_switched_on(name, contribution.source):
                return switched_off_text(name)
        return None

    # -- lifecycle -----------------------------------------------------------------------

    async def start(
        self, features: Sequence[Feature], contributions: Sequence[ToolContribution]
    ) -> None:
        """Install the gate and the external hooks, run every feature's agent step, then
        activate `contributions` into this agent's registry."""
        session = self.session.context
        if session is None:
            raise RuntimeError("the session scope must start before its agents")
        self._closers.add_sync(self.gate.install(self.before_hooks))
        self._install_external_hooks(session.config, self.session.loaded)
        self.services.provide(self.registry)
        self.services.provide(self.gate)
        self.services.provide(self.injections)
        self.services.provide(self.loop_hooks)
        self.services.provide(self.questions)
        self.services.provide(self.inbox)
        self.services.provide(self.subagents)
        self.services.provide(self.offer)
        ctx = AgentContext(
            session=session,
            identity=self.identity,
            services=self.services,
            registry=self.registry,
            before_hooks=self.before_hooks,
            after_hooks=self.after_hooks,
            gate=self.gate,
            injections=self.injections,
            is_switched_on=self.is_switched_on,
            executor=self.executor,
            closers=self._closers,
            loop=self.loop_hooks,
            inbox=self.inbox,
            questions=self.questions,
            subagents=self.subagents,
            offer=self.offer,
        )
        self._started = True
        self._hear_task_endings()
        for feature in features:
            await feature.start_agent(ctx)
        self._activate(contributions)

    def _hear_task_endings(self) -> None:
        """The endings of the background tasks this agent started (any kind) are a
        "task_finished" injection source of its channel, each told once."""
        board = self.services.find(TaskBoard)
        if board is None:
            return
        agent_id = self.agent_id

        def ended() -> list[Injection]:
            return [Injection(TASK_FINISHED_KIND, n.message) for n in board.take_notices(agent_id)]

        self._closers.add_sync(self.injections.add_source(ended, TASK_FINISHED_KIND))

    async def close(self) -> None:
        """Close the children, then undo this agent's steps, newest first."""
        while self._children:
            await self._children.pop().close()
        await self._closers.close_all()
        self.services.clear()
        self._started = False

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when this agent scope closes."""
        self._closers.add(closer)

    def _install_external_hooks(self, config: object, loaded: LoadedConfig) -> None:
        hooks = self.session.config.hooks
        commands = [
            CommandHook("PreToolUse", h.command, h.matcher, h.timeout, loaded.origin(h.command))
            for h in hooks.pre_tool_use
        ] + [
            CommandHook("PostToolUse", h.command, h.matcher, h.timeout, loaded.origin(h.command))
            for h in hooks.post_tool_use
        ]
        external = ExternalHooks(
            commands,
            workspace=self.session.workspace_path,
            session_id=self.session.session_id,
            events=self.session.events,
            mode=lambda: self.session.permissions.mode,
        )
        self._closers.add_sync(external.install(self.before_hooks, self.after_hooks))

    def _activate(self, contributions: Sequence[ToolContribution]) -> None:
        if self.parent is not None:
            # A child never has a tool its parent lacks.
            allowed = set(self.parent.registry.names())
            contributions = [c for c in contributions if c.name is None or c.name in allowed]
        self.contributions = list(contributions)
        before = {e.name: e for e in self.registry.entries()}
        activation = Activation(
            self.registry,
            self.services,
            self.session.env.capabilities,
            self.profile,
            self.policy,
            self.session.diagnostics,
        )
        added = activation.activate(self.contributions)
        registry = self.registry

        def deactivate() -> None:
            for name in added:
                entry = registry.get(name)
                if entry is not None and before.get(name) is not entry:
                    registry.unregister(name)

        self._closers.add_sync(deactivate)
        self._check_patterns()

    def _check_patterns(self) -> None:
        known = known_names(self.contributions, self.registry)
        config = self.session.config
        fields = (
            ("[tools] enabled", config.tools.enabled),
            ("[tools] disabled", config.tools.disabled),
        )
        for field_name, patterns in fields:
            for issue in find_inactive_patterns(patterns, known.__contains__):
                self.session.diagnostics.append(
                    Diagnostic("warning", field_name, issue.message("the configuration"))
                )

    # -- children ------------------------------------------------------------------------

    async def spawn_child(self, agent_id: str, profile: Profile | None = None) -> AgentRuntime:
        """A child agent in the same session, started: the session scope shared (MCP
        connections, background tasks, permission engine with its mode, rules and session
        approvals), its tools its profile's within this agent's, its calls' events
        carrying `agent_id`. It closes with this agent (or earlier, by `close()`)."""
        if not self._started:
            raise RuntimeError("start the parent agent before spawning a child")
        if agent_id == self.agent_id or any(c.agent_id == agent_id for c in self._children):
            raise ValueError(f'an agent named "{agent_id}" already exists in this session')
        child = AgentRuntime(
            self.session,
            self.identity.for_agent(agent_id),
            profile=profile,
            parent=self,
            approver=self.gate.approver,
            approve_asks=self.gate.approve_asks,
            questions=self.questions,
        )
        features = self.session.features
        try:
            await child.start(features, self.contributions)
        except BaseException:
            await child.close()
            raise
        self._children.append(child)
        return child

    def child(self, agent_id: str) -> AgentRuntime | None:
        """This agent's open child scope with this id, if there is one (a loop that stopped
        and started again takes its children back)."""
        return next((c for c in self._children if c.agent_id == agent_id), None)

    # -- calling -------------------------------------------------------------------------

    async def run_batch(self, calls: Sequence[ToolCall]) -> list[CallResult]:
        """Run one batch of this agent's calls through its executor."""
        return await self.executor.run_batch(list(calls))
