"""The `Runtime` facade: one workspace, one session, one main agent, wired.

It composes a `SessionRuntime` (env, path policy, session directory, permission engine,
event bus, the features' session services) and the main `AgentRuntime` (registry, hooks,
gate, executor, the features' agent services), and closes whatever they started.

    async with Runtime("path/to/repo") as rt:
        result = await rt.call("Read", {"path": "README.md"})
        print(result.text)

`close()` then `start()` works: the features' services are built afresh (a new task
manager, the MCP servers started again), while what the host added (tools, hooks, the
approver, the mode and session approvals) stays.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from deftly.config.loader import FeatureTables, LoadedConfig, load_config, parse_config
from deftly.config.model import DeftlyConfig
from deftly.config.trust import TrustStore, describe_withheld, mcp_servers_withheld
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ConfigError, DeftlyError
from deftly.contract.identity import MAIN_AGENT, Identity
from deftly.contract.schema import JsonSchema
from deftly.contract.tool import BaseTool, CancelToken, ToolExecution, tool_title
from deftly.contract.traits import ToolTraits
from deftly.env.base import ExecEnv
from deftly.env.local import LocalEnv
from deftly.execution.calls import ArgumentsParseError, CallResult, ToolCall, parse_arguments
from deftly.execution.events import EventListener
from deftly.execution.hooks import AfterHook, BeforeHook, HookChain
from deftly.execution.probe import check_rules
from deftly.features.api import Closer, Feature, feature_tables
from deftly.policy.approval import Approver, NonInteractiveApprover
from deftly.policy.paths import Workspace, real_path
from deftly.policy.permissions import Mode, PermissionDecision, PermissionEngine, parse_mode
from deftly.registry.activation import Profile, known_names
from deftly.registry.host import HostHandler, HostTool
from deftly.registry.registry import Disclosure, Source, ToolRegistry
from deftly.runtime.agent_runtime import AgentRuntime
from deftly.runtime.session_runtime import SessionRuntime
from deftly.runtime.tool_info import ToolInfo
from deftly.runtime.tool_sources import ExtraTool, gather_contributions, split_extras
from deftly.session import data_home, new_session_id
from deftly.session.questions import AnswerCallback, Answerer, QuestionDesk

if TYPE_CHECKING:
    from deftly.features.disclosure.disclosure import ModelTools
    from deftly.features.skills.service import SkillService

log = logging.getLogger(__name__)

T = TypeVar("T")


class Runtime:
    """One workspace's tool runtime. Use it as an async context manager.

    `trust`: whether the workspace's own config (`.deftly/config.toml`, `.deftly/mcp.json`)
    may run programs and widen permissions: True for this run, False never, None (the
    default) as recorded by `deftly trust` in the data home. Untrusted, those settings are
    ignored with one diagnostic; its deny and ask rules apply either way. `config=` is the
    host's own and always applies (the workspace's config.toml is then not read).

    `features`: the capabilities to wire (default `deftly.features.BUILTIN_FEATURES`; add
    your own with `features=[*BUILTIN_FEATURES, mine]`). `builtins=False` leaves out the
    built-in features' tools (their services still run).

    `answerer`: who answers the questions tools put to the person (an `Answerer`, or a
    function from a `QuestionRequest` to answers); without one, such tools are not offered.
    """

    def __init__(
        self,
        workspace: str | Path = ".",
        *,
        mode: str | None = None,
        config: DeftlyConfig | Mapping[str, Any] | None = None,
        tools: Iterable[ExtraTool] = (),
        profile: Profile | None = None,
        env: ExecEnv | None = None,
        builtins: bool = True,
        plugins: bool = True,
        home: str | Path | None = None,
        session_id: str | None = None,
        approve_asks: bool = False,
        approver: Approver | None = None,
        trust: bool | None = None,
        features: Sequence[Feature] | None = None,
        answerer: Answerer | AnswerCallback | None = None,
    ) -> None:
        env = env or LocalEnv()
        workspace_path = _workspace_dir(env, workspace)
        self._home = Path(home).expanduser() if home else data_home()
        self._diagnostics: list[Diagnostic] = []
        trusted, trust_problem = _decide_trust(trust, workspace_path, self._home)
        self._features = tuple(_builtin_features() if features is None else features)
        tables = feature_tables(self._features)
        loaded = _load_config(config, workspace_path, trusted, tables)
        chosen = (
            parse_mode(mode, "Runtime(mode=...)")
            if mode is not None
            else loaded.config.permissions.mode
        )
        self._session = SessionRuntime(
            workspace_path=workspace_path,
            home=self._home,
            loaded=loaded,
            env=env,
            session_id=session_id or new_session_id(),
            mode=chosen,
            trusted=trusted,
            features=self._features,
            diagnostics=self._diagnostics,
        )
        self._session.with_options(plugins=plugins)
        self._report_trust(trust_problem, read_workspace_config=config is None)
        self._agent = AgentRuntime(
            self._session,
            Identity(self._session.session_id, MAIN_AGENT),
            profile=profile,
            approver=approver,
            approve_asks=approve_asks,
            questions=QuestionDesk(answerer),
        )
        self._instances, self._extra_contributions = split_extras(tools)
        self._builtins = builtins
        self._plugins = plugins
        self._call_ids = itertools.count(1)
        self._started = False

    # -- what the host may read ----------------------------------------------------------

    @property
    def workspace_path(self) -> Path:
        """The workspace's root directory (resolved)."""
        return self._session.workspace_path

    @property
    def workspace(self) -> Workspace:
        """The workspace's path policy."""
        return self._session.workspace

    @property
    def session_id(self) -> str:
        """This session's id (pass it as `Runtime(session_id=...)` to resume it)."""
        return self._session.session_id

    @property
    def session_dir(self) -> Path:
        """This session's directory (spill files, task logs, plans, state)."""
        return self._session.session_dir

    @property
    def home(self) -> Path:
        """deftly's data home (sessions, the trust record, scratch journals)."""
        return self._home

    @property
    def trusted(self) -> bool:
        """Whether the workspace's own config may run programs and widen permissions."""
        return self._session.trusted

    @property
    def config(self) -> DeftlyConfig:
        """The configuration in effect."""
        return self._session.config

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What went wrong or was left out while loading (config, tools, servers)."""
        return self._diagnostics

    @property
    def permissions(self) -> PermissionEngine:
        """The session's permission engine (mode, rules, session approvals)."""
        return self._session.permissions

    @property
    def registry(self) -> ToolRegistry:
        """The main agent's tools (the session's MCP tools included)."""
        return self._agent.registry

    @property
    def before_hooks(self) -> HookChain[BeforeHook]:
        """The main agent's before-hooks: add yours with `.add(id, hook, order=...)`."""
        return self._agent.before_hooks

    @property
    def after_hooks(self) -> HookChain[AfterHook]:
        """The main agent's after-hooks."""
        return self._agent.after_hooks

    @property
    def session(self) -> SessionRuntime:
        """The session scope (shared by every agent of the session)."""
        return self._session

    @property
    def agent(self) -> AgentRuntime:
        """The main agent's scope; `await rt.agent.spawn_child(id, profile)` adds a child."""
        return self._agent

    def service(self, wanted: type[T]) -> T:
        """A service of the main agent's scope (or the session's) by type, after `start()`:
        `rt.service(BackgroundTasks)`. A LookupError names what is provided."""
        return self._agent.services.get(wanted)

    @property
    def skills(self) -> SkillService:
        """This workspace's skills (after `start()`); ConfigError when [skills] is off."""
        from deftly.features.skills.service import SkillService  # the skills feature's, when used

        service = self._agent.services.find(SkillService)
        if service is None:
            raise ConfigError(
                "Skills are switched off ([skills] enabled = false) or the runtime has not "
                "started yet."
            )
        return service

    # -- how the host will use it (before start) -----------------------------------------

    def only_mcp_for(self, tool_names: Iterable[str]) -> Self:
        """Start only the MCP servers whose tools are named (`mcp__<server>__<tool>`);
        no server for built-in names. For a one-shot caller (`deftly call`) that knows
        what it will call. Call before `start()`."""
        self._session.with_options(only_tools=frozenset(tool_names))
        return self

    def without_background(self) -> Self:
        """For a one-shot caller that exits after its call (`deftly call`): background
        tasks are refused, a foreground timeout kills, and Bash's description says so.
        Call before `start()`."""
        self._session.with_options(background=False)
        return self

    def connect_in_background(self) -> Self:
        """For a long-lived host (`deftly serve`): `start()` returns without waiting for
        mounted MCP servers; their tools appear as each connects (a change event). Call
        before `start()`."""
        self._session.with_options(connect_in_background=True)
        return self

    def add_mcp_config(self, path: str | Path) -> None:
        """Mount the servers of one more mcp.json file too (call before `start()`)."""
        config = self._session.config
        files = [*config.mcp.config_files, str(Path(path).expanduser().resolve())]
        self._session.config = config.model_copy(
            update={"mcp": config.mcp.model_copy(update={"config_files": files})}
        )

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the session scope and the main agent (idempotent). Again after `close()`,
        it builds fresh services."""
        if self._started:
            return
        self._started = True
        try:
            await self._session.start()
            await self._agent.start(self._features, self._contributions())
            await self._check_rules()
        except BaseException:
            # A start cut short (a signal cancelling it, an error) stops what it had
            # started already, MCP servers first of all: `async with` never reaches exit.
            await self.close()
            raise

    async def close(self) -> None:
        """Stop everything the runtime's features and tools started, newest first."""
        try:
            await self._agent.close()
        finally:
            await self._session.close()
            self._started = False

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when the runtime closes (background processes, MCP clients...)."""
        self._session.on_close(closer)

    def _contributions(self) -> list[Any]:
        for tool in self._instances:
            self._agent.registry.register(tool, source="user")
        builtin = set(_builtin_features())
        features = [f for f in self._features if self._builtins or f not in builtin]
        return gather_contributions(
            self._extra_contributions,
            self.config,
            features,
            self._diagnostics,
            plugins=self._plugins,
        )

    async def _check_rules(self) -> None:
        """Rules that can match nothing are warnings; a rule's failing example stops the
        start (checked through the tools' own matchers, so only now)."""
        known = known_names(self._agent.contributions, self._agent.registry)
        self._diagnostics += await check_rules(
            self._session.permissions.rules, self._agent.registry, known
        )

    def _report_trust(self, problem: str | None, *, read_workspace_config: bool) -> None:
        """One diagnostic naming every workspace setting left out for want of trust."""
        if problem:
            self._diagnostics.append(Diagnostic("warning", "workspace trust", problem))
        if self.trusted:
            return
        loaded = self._session.loaded
        withheld = list(loaded.withheld) if read_workspace_config else []
        withheld.extend(mcp_servers_withheld(self.workspace_path, self.config.mcp.config_files))
        if withheld:
            self._diagnostics.append(
                Diagnostic(
                    "warning", "workspace trust", describe_withheld(self.workspace_path, withheld)
                )
            )

    # -- permissions ---------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        """The permission mode: manual, yolo or auto."""
        return self._session.permissions.mode

    def set_mode(self, mode: Mode | str) -> Mode:
        """Switch the permission mode now (ConfigError if unknown); returns the old one."""
        return self._session.permissions.set_mode(mode)

    @property
    def approve_asks(self) -> bool:
        """Approve every call that would ask (like `--yes`); never overrides a deny."""
        return self._agent.gate.approve_asks

    @approve_asks.setter
    def approve_asks(self, value: bool) -> None:
        self._agent.gate.approve_asks = value

    @property
    def approver(self) -> Approver:
        """Who is asked when a call needs approval (default: nobody, so asks are refused)."""
        return self._agent.gate.approver

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        self._agent.gate.approver = approver or NonInteractiveApprover()

    @property
    def answerer(self) -> Answerer | None:
        """Who answers the questions tools ask the person (AskUserQuestion); None: nobody,
        so such tools are not offered. Set it to an `Answerer` or a function."""
        return self._agent.questions.answerer

    @answerer.setter
    def answerer(self, answerer: Answerer | AnswerCallback | None) -> None:
        self._agent.questions.answerer = answerer

    async def explain(
        self, name: str, arguments: Mapping[str, Any] | str | None = None
    ) -> PermissionDecision:
        """What the permission chain would decide for this call, without running it (and
        without asking anyone). Raises DeftlyError when the call would fail before the
        chain: an unknown or switched-off tool, bad arguments, a refused path."""
        if not self._started:
            await self.start()
        entry = self._agent.registry.get(name)
        if entry is None or not self._agent.is_switched_on(entry.name, entry.source):
            raise DeftlyError(f'There is no active tool named "{name}".')
        try:
            raw = parse_arguments(arguments)
        except ArgumentsParseError as exc:
            raise DeftlyError(f'The arguments for "{name}" are not valid JSON ({exc}).') from None
        resolution = entry.tool.resolve(entry.tool.parse_args(raw))
        if inspect.isawaitable(resolution):
            resolution = await resolution
        if not isinstance(resolution, ToolExecution):
            raise DeftlyError(
                f'"{name}" answers this call itself without running anything, so no '
                "permission is needed."
            )
        return self._session.permissions.decide(name, resolution, entry.tool.traits)

    # -- tools ---------------------------------------------------------------------------

    def register_tool(
        self, tool: BaseTool, *, source: Source = "user", disclosure: Disclosure = "inline"
    ) -> Callable[[], None]:
        """Add (or replace) a tool; returns a function that removes it again."""
        return self._agent.registry.register(tool, source=source, disclosure=disclosure)

    def register_host_tool(
        self,
        name: str,
        description: str,
        parameters: JsonSchema,
        handler: HostHandler,
        *,
        disclosure: Disclosure = "inline",
        traits: ToolTraits | None = None,
    ) -> Callable[[], None]:
        """A tool described by a JSON schema and run by `handler(args, ctx)` in the host;
        `traits` say what it is like (`ToolTraits(writes_files=True)`: plan mode guards it
        like Write), by default nothing."""
        tool = HostTool(name, description, parameters, handler, traits=traits)
        return self.register_tool(tool, source="user", disclosure=disclosure)

    def tools(self) -> list[ToolInfo]:
        """The tools offered now, sorted by name: switched on, and usable here (a tool that
        asks the person needs an answerer; one that schedules prompts needs an inbox
        consumer)."""
        return [
            ToolInfo(
                e.name,
                e.tool.description,
                e.tool.parameters,
                e.source,
                e.disclosure,
                tool_title(e.tool),
                e.tool.output_schema,
            )
            for e in self._agent.offered()
        ]

    def model_tools(self) -> ModelTools[ToolInfo]:
        """The tools an agent loop should send with its next model request, plus the
        deferred-tool announcement to add to the conversation (None when nothing changed)."""
        from deftly.features.disclosure.disclosure import DeferredTools, ModelTools

        deferred = self._agent.services.find(DeferredTools)
        if deferred is None:
            return ModelTools(self.tools(), None)
        return deferred.shape(self.tools(), lambda info: info.name)

    # -- calling -------------------------------------------------------------------------

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Deliver every event of the session (calls, progress, notices) to `listener`."""
        return self._session.events.subscribe(listener)

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        call_id: str | None = None,
        cancel: CancelToken | None = None,
    ) -> CallResult:
        """Run one call through the whole pipeline."""
        [result] = await self.run_batch(
            [ToolCall(call_id or self._next_id(), name, arguments)], cancel=cancel
        )
        return result

    async def run_batch(
        self,
        calls: Sequence[ToolCall | Mapping[str, Any]],
        *,
        cancel: CancelToken | None = None,
    ) -> list[CallResult]:
        """Run calls as one batch; results come back in the order given."""
        if not self._started:
            await self.start()
        return await self._agent.executor.run_batch(
            [self._as_call(c) for c in calls], cancel=cancel
        )

    def start_batch(
        self, calls: Sequence[ToolCall | Mapping[str, Any]], *, cancel: CancelToken
    ) -> asyncio.Future[list[CallResult]]:
        """`run_batch` without the wait, for a caller that waits its own way: the batch
        starts now and the future holds its results (stop it through `cancel`). The runtime
        must be started."""
        if not self._started:
            raise RuntimeError(
                "start the runtime first: `async with Runtime(...)` or `await rt.start()`"
            )
        return self._agent.executor.start_batch([self._as_call(c) for c in calls], cancel=cancel)

    def _next_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    def _as_call(self, call: ToolCall | Mapping[str, Any]) -> ToolCall:
        if isinstance(call, ToolCall):
            return call
        return ToolCall(
            str(call.get("id") or self._next_id()), str(call.get("name", "")), call.get("arguments")
        )


def _decide_trust(trust: bool | None, workspace: Path, home: Path) -> tuple[bool, str | None]:
    """Whether the workspace's own config may run programs and widen permissions:
    `trust` when given, else whether the user recorded the folder (`deftly trust`); and
    the trust record's problem, if it could not be read."""
    if trust is not None:
        return trust, None
    store = TrustStore(home)
    trusted = store.is_trusted(workspace)
    return trusted, store.problem


def _load_config(
    config: DeftlyConfig | Mapping[str, Any] | None,
    workspace: Path,
    trusted: bool,
    tables: FeatureTables,
) -> LoadedConfig:
    if isinstance(config, DeftlyConfig):
        return LoadedConfig(config)
    if config is not None:
        return LoadedConfig(parse_config(config, "the configuration passed to Runtime", tables))
    return load_config(workspace, trusted=trusted, tables=tables)


__all__ = ["Runtime", "ToolInfo"]


def _workspace_dir(env: ExecEnv, workspace: str | Path) -> Path:
    """The workspace as `env` names it: absolute, its links resolved (through the env's
    probe, so a rooted env's `/workspace` is one), and checked to be a directory there."""
    path = real_path(os.path.abspath(os.path.expanduser(workspace)), env.path_probe())
    try:
        is_dir = env.stat(path).is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        raise ConfigError(f"The workspace {path} is not a directory.")
    return path


def _builtin_features() -> tuple[Feature, ...]:
    """deftly's own features, imported when the first runtime is built (not when this
    module is: `from deftly import Runtime` stays light)."""
    from deftly.features import BUILTIN_FEATURES

    return BUILTIN_FEATURES
