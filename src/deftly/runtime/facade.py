"""The `Runtime` facade: one workspace, wired.

It owns the execution environment, the workspace's path policy, the session directory,
the tool registry, hooks and the executor, and closes whatever its tools started.

    async with Runtime("path/to/repo") as rt:
        result = await rt.call("Read", {"path": "README.md"})
        print(result.text)
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from deftly.config.loader import LoadedConfig, load_config, parse_config, user_config_dir
from deftly.config.model import DeftlyConfig
from deftly.config.trust import TrustStore, describe_withheld, mcp_servers_withheld
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ConfigError, DeftlyError, ToolLoadError
from deftly.contract.result import ToolResult
from deftly.contract.schema import JsonSchema
from deftly.contract.tool import BaseTool, CancelToken, ToolExecution
from deftly.env.base import ExecEnv
from deftly.env.local import LocalEnv
from deftly.execution.calls import ArgumentsParseError, CallResult, ToolCall, parse_arguments
from deftly.execution.events import (
    Event,
    EventBus,
    EventListener,
    RuntimeNotice,
    ToolCallFinished,
    ToolCallStarted,
)
from deftly.execution.executor import Executor
from deftly.execution.external_hooks import CommandHook, ExternalHooks
from deftly.execution.hooks import (
    AfterHook,
    BeforeContext,
    BeforeHook,
    Decision,
    HookChain,
    HookOrder,
    Veto,
)
from deftly.execution.permission_gate import PermissionGate
from deftly.execution.probe import check_rules
from deftly.execution.spill import OutputBudget, Spiller
from deftly.features import builtin_contributions
from deftly.features.disclosure.disclosure import DeferredTools, ModelTools
from deftly.features.mcp.manager import McpManager
from deftly.features.mcp.selection import servers_for
from deftly.features.mcp.specs import load_specs
from deftly.features.plan.mode import PlanGuard, PlanMode
from deftly.features.shell.tasks import BackgroundTasks
from deftly.features.skills import SkillService
from deftly.features.skills.skill import SkillHost, SkillTool
from deftly.policy.approval import Approver, NonInteractiveApprover
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from deftly.policy.permissions import (
    Mode,
    PermissionDecision,
    PermissionEngine,
    RuleBook,
    parse_mode,
)
from deftly.policy.tool_policy import ToolPolicy, find_inactive_patterns
from deftly.registry.activation import Activation, Profile, known_names
from deftly.registry.contribution import (
    ToolContribution,
    entry_point_contributions,
    load_tool_path,
)
from deftly.registry.host import HostHandler, HostTool
from deftly.registry.registry import Disclosure, RegisteredTool, Source, ToolRegistry
from deftly.registry.services import Services
from deftly.runtime.tool_info import ToolInfo
from deftly.session import SessionClaim, data_home, new_session_id, prune_sessions, session_dir

log = logging.getLogger(__name__)

ExtraTool = BaseTool | ToolContribution | type[BaseTool] | str
Closer = Callable[[], Awaitable[None]]


class Runtime:
    """One workspace's tool runtime. Use it as an async context manager.

    `trust`: whether the workspace's own config (`.deftly/config.toml`, `.deftly/mcp.json`)
    may run programs and widen permissions: True for this run, False never, None (the
    default) as recorded by `deftly trust` in the data home. Untrusted, those settings are
    ignored with one diagnostic; its deny and ask rules apply either way. `config=` is the
    host's own and always applies (the workspace's config.toml is then not read).
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
    ) -> None:
        self.workspace_path = Path(workspace).expanduser().resolve()
        if not self.workspace_path.is_dir():
            raise ConfigError(f"The workspace {self.workspace_path} is not a directory.")
        self.home = Path(home).expanduser() if home else data_home()
        self.trusted = self._decide_trust(trust)
        self.loaded = self._load_config(config)
        self.config = self.loaded.config
        self.env = env or LocalEnv()
        self.session_id = session_id or new_session_id()
        self.session_dir = session_dir(self.workspace_path, self.session_id, self.home)
        self.spill_dir = self.session_dir / "spill"
        self.workspace = Workspace(self.workspace_path, home=self.env.home())
        self.workspace.add_directory(self.spill_dir)
        for extra in self.config.permissions.additional_directories:
            self.workspace.add_directory(Path(extra).expanduser())
        self.events = EventBus()
        self._init_safety(mode, approve_asks, approver)
        self.profile = profile or Profile()
        self.policy = ToolPolicy.from_lists(self.config.tools.enabled, self.config.tools.disabled)
        self.diagnostics: list[Diagnostic] = []
        self._report_trust(config is None)
        self.registry = ToolRegistry()
        self.services = Services()
        self.before_hooks: HookChain[BeforeHook] = HookChain()
        self.after_hooks: HookChain[AfterHook] = HookChain()
        self.executor = Executor(
            self.registry,
            Spiller(self.spill_dir, self._budget()),
            self.events,
            self.before_hooks,
            self.after_hooks,
        )
        self.executor.guards.append(self._policy_guard)
        self.executor.missing.append(self._describe_switched_off)
        self._extra_tools = list(tools)
        self._builtins = builtins
        self._plugins = plugins
        self._closers: list[Closer] = []
        self._call_ids = itertools.count(1)
        self._started = False
        self._contributions: list[ToolContribution] = []
        self.background = True
        """Whether Bash may start background tasks (see `without_background`)."""
        self.mcp_for: Collection[str] | None = None
        """Start only the MCP servers these tool names need (None: every server; see
        `only_mcp_for`)."""

    def only_mcp_for(self, tool_names: Iterable[str]) -> Self:
        """Start only the MCP servers whose tools are named (`mcp__<server>__<tool>`);
        no server for built-in names. For a one-shot caller (`deftly call`) that knows
        what it will call. Call before `start()`."""
        self.mcp_for = frozenset(tool_names)
        return self

    def without_background(self) -> Self:
        """For a one-shot caller that exits after its call (`deftly call`): background
        tasks are refused, a foreground timeout kills, and Bash's description says so.
        Call before `start()`."""
        self.background = False
        return self

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
        if self._started:
            return
        self._started = True
        try:
            await self._hold_session()
            # Scratch files of atomic writes killed half-way (by any earlier process) go now.
            await asyncio.to_thread(self.env.keep_scratch_journal, self.home / "scratch")
            self._provide_services()
            self._wire_safety()
            self._wire_files()
            self._wire_skills()
            await self._wire_shell()
            await self._wire_mcp()
            self._activate_tools()
            await self._check_rules()
        except BaseException:
            # A start cut short (a signal cancelling it, an error) stops what it had
            # started already, MCP servers first of all: `async with` never reaches exit.
            await self.close()
            raise

    async def close(self) -> None:
        """Stop everything the runtime's tools started, newest first."""
        while self._closers:
            closer = self._closers.pop()
            try:
                await closer()
            except Exception:
                log.exception("error while closing the runtime")
        self._started = False

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when the runtime closes (background processes, MCP clients...)."""
        self._closers.append(closer)

    # -- wiring --------------------------------------------------------------------------

    async def _hold_session(self) -> None:
        """Claim this session's directory (so no other runtime prunes it), then remove
        this workspace's sessions left untouched for `[session] keep_days`."""
        claim = SessionClaim(self.session_dir)
        try:
            claim.claim()
        except OSError as exc:
            self.diagnostics.append(
                Diagnostic(
                    "warning",
                    "session",
                    f"cannot use the session directory {self.session_dir} ({exc}); long "
                    "results cannot be spilled to disk",
                )
            )
            return

        async def release() -> None:
            claim.release()

        self.on_close(release)
        keep_days = self.config.session.keep_days
        if keep_days > 0:
            removed = await asyncio.to_thread(
                prune_sessions,
                self.session_dir.parent,
                older_than_days=keep_days,
                keep=self.session_dir,
            )
            if removed:
                log.info("removed %d session(s) older than %g days", len(removed), keep_days)

    def _wire_skills(self) -> None:
        """The skill service: the Skill tool, `deftly skills` and MCP prompts use it.

        Skill roots join the workspace's directories (so Read can open a skill's payload),
        and the executor's events mark model steps for counting nested skill loads.
        """
        self._skills: SkillService | None = None
        if not self.config.skills.enabled:
            return

        def allow_roots(roots: Sequence[Path]) -> None:
            for root in roots:
                self.workspace.add_directory(root)

        service = SkillService(
            self.workspace_path,
            self.config.skills,
            home=self.env.home(),
            session_id=self.session_id,
            packages=self._plugins,
            on_roots=allow_roots,
        )

        def mark_steps(event: Event) -> None:
            if isinstance(event, ToolCallStarted):
                service.nesting.call_started()
            elif isinstance(event, ToolCallFinished):
                service.nesting.call_finished()

        def skill_limit(call: ToolCall, entry: RegisteredTool) -> str | None:
            """A running skill's allowed-tools (loading another skill stays possible)."""
            return None if isinstance(entry.tool, SkillTool) else service.refusal_for(entry.name)

        async def skill_patterns(ctx: BeforeContext) -> Decision:
            """Its `Tool(pattern)` entries, once the call is resolved (`Bash(git diff:*)`)."""
            refusal = service.pattern_refusal_for(ctx.call.name, ctx.execution.matches_rule)
            return Veto(ToolResult.error(refusal)) if refusal is not None else None

        unsubscribe = self.events.subscribe(mark_steps)
        self.executor.guards.append(skill_limit)
        remove_hook = self.before_hooks.add(
            "skill-allowed-tools", skill_patterns, order=HookOrder.PLAN_GUARD
        )

        async def stop() -> None:
            unsubscribe()
            self.executor.guards.remove(skill_limit)
            remove_hook()

        self.on_close(stop)
        self.services.provide(service)
        self.services.provide(service, SkillHost)
        self._skills = service

    @property
    def skills(self) -> SkillService:
        """This workspace's skills (after `start()`); ConfigError when [skills] is off."""
        service: SkillService | None = getattr(self, "_skills", None)
        if service is None:
            raise ConfigError(
                "Skills are switched off ([skills] enabled = false) or the runtime has not "
                "started yet."
            )
        return service

    def _load_config(self, config: DeftlyConfig | Mapping[str, Any] | None) -> LoadedConfig:
        if isinstance(config, DeftlyConfig):
            return LoadedConfig(config)
        if config is not None:
            return LoadedConfig(parse_config(config, "the configuration passed to Runtime"))
        return load_config(self.workspace_path, trusted=self.trusted)

    def _decide_trust(self, trust: bool | None) -> bool:
        """Whether the workspace's own config may run programs and widen permissions:
        `trust` when given, else whether the user recorded the folder (`deftly trust`)."""
        self._trust_problem: str | None = None
        if trust is not None:
            return trust
        store = TrustStore(self.home)
        trusted = store.is_trusted(self.workspace_path)
        self._trust_problem = store.problem
        return trusted

    def _report_trust(self, read_workspace_config: bool) -> None:
        """One diagnostic naming every workspace setting left out for want of trust."""
        if self._trust_problem:
            self.diagnostics.append(Diagnostic("warning", "workspace trust", self._trust_problem))
        if self.trusted:
            return
        withheld = list(self.loaded.withheld) if read_workspace_config else []
        withheld.extend(mcp_servers_withheld(self.workspace_path, self.config.mcp.config_files))
        if withheld:
            self.diagnostics.append(
                Diagnostic(
                    "warning", "workspace trust", describe_withheld(self.workspace_path, withheld)
                )
            )

    def _budget(self) -> OutputBudget:
        out = self.config.output
        return OutputBudget(out.max_chars, out.retained_chars, out.head_chars, out.tail_chars)

    # -- safety: permissions, approvals, plan mode, external hooks ------------------------

    def _init_safety(self, mode: str | None, approve_asks: bool, approver: Approver | None) -> None:
        """The permission engine and gate; bad rules or a bad mode fail here, at load."""
        section = self.config.permissions
        rules = RuleBook.from_lists(
            allow=section.allow, ask=section.ask, deny=section.deny, origin=self.loaded.origin
        )
        chosen = parse_mode(mode, "Runtime(mode=...)") if mode is not None else section.mode
        # The user's config and the record of trusted folders loosen the leash too.
        control = ControlFiles.of([user_config_dir()], files=[TrustStore(self.home).path])
        self.permissions = PermissionEngine(self.workspace, rules, chosen, control=control)
        self.permissions.harmless_commands = tuple(section.harmless_commands)
        self.gate = PermissionGate(
            self.permissions, self.events, approver=approver, approve_asks=approve_asks
        )
        self.plan_mode = PlanMode(self.session_dir / "plans")
        self.workspace.add_directory(self.plan_mode.plans_dir)
        self.permissions.on_mode_change(
            lambda old, new: self.events.emit(
                RuntimeNotice("permission_mode", f"permission mode: {old} -> {new}", str(new))
            )
        )

    def _wire_safety(self) -> None:
        """Install the before/after hooks that guard every call, in their fixed order:
        deny rules, plan mode, PreToolUse commands, (host hooks), approval; PostToolUse."""
        self.gate.install(self.before_hooks)
        guard = PlanGuard(self.plan_mode, self.gate, lambda: self.mode)
        self.before_hooks.add("plan-mode", guard, order=HookOrder.PLAN_GUARD)
        self.gate.grants.append(guard.grant)
        self.services.provide(self.plan_mode)
        hooks = self.config.hooks
        commands = [
            CommandHook(
                "PreToolUse", h.command, h.matcher, h.timeout, self.loaded.origin(h.command)
            )
            for h in hooks.pre_tool_use
        ] + [
            CommandHook(
                "PostToolUse", h.command, h.matcher, h.timeout, self.loaded.origin(h.command)
            )
            for h in hooks.post_tool_use
        ]
        self.external_hooks = ExternalHooks(
            commands,
            workspace=self.workspace_path,
            session_id=self.session_id,
            events=self.events,
            mode=lambda: self.mode,
        )
        self.external_hooks.install(self.before_hooks, self.after_hooks)

    @property
    def mode(self) -> Mode:
        """The permission mode: manual, yolo or auto."""
        return self.permissions.mode

    def set_mode(self, mode: Mode | str) -> Mode:
        """Switch the permission mode now (ConfigError if unknown); returns the old one."""
        return self.permissions.set_mode(mode)

    @property
    def approve_asks(self) -> bool:
        """Approve every call that would ask (like `--yes`); never overrides a deny."""
        return self.gate.approve_asks

    @approve_asks.setter
    def approve_asks(self, value: bool) -> None:
        self.gate.approve_asks = value

    @property
    def approver(self) -> Approver:
        """Who is asked when a call needs approval (default: nobody, so asks are refused)."""
        return self.gate.approver

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        self.gate.approver = approver or NonInteractiveApprover()

    async def explain(
        self, name: str, arguments: Mapping[str, Any] | str | None = None
    ) -> PermissionDecision:
        """What the permission chain would decide for this call, without running it (and
        without asking anyone). Raises DeftlyError when the call would fail before the
        chain: an unknown or switched-off tool, bad arguments, a refused path."""
        if not self._started:
            await self.start()
        entry = self.registry.get(name)
        if entry is None or not self._is_switched_on(entry.name, entry.source):
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
        return self.permissions.decide(name, resolution, entry.tool.traits)

    def _provide_services(self) -> None:
        """Everything a tool's constructor may ask for, by type."""
        for instance in (
            self,
            self.env,
            self.workspace,
            self.config,
            self.events,
            self.registry,
            *(getattr(self.config, name) for name in type(self.config).model_fields),
        ):
            self.services.provide(instance)
        self.services.provide(self.env, ExecEnv)
        self.services.provide(self.permissions.control)  # Bash finds commands naming them

    def _wire_files(self) -> None:
        """The file tools' shared memory of what was read and written (stale-read guard)."""
        from deftly.features.files.tracker import FileTracker

        tracker = FileTracker(self.config.files.stale_hash_max_bytes)
        self.services.provide(tracker)
        self.permissions.seen_files = tracker.get  # a file this session saw may change

    async def _wire_shell(self) -> None:
        """Background tasks for Bash: one manager per runtime, its logs in the session
        directory (readable by the file tools), every task stopped on close."""
        tasks = BackgroundTasks(
            self.env,
            self.config.shell,
            self.session_dir / "tasks",
            workspace=self.workspace,
            events=self.events,
            background=self.background,
        )
        self.diagnostics.extend(await tasks.check())
        self.workspace.add_directory(tasks.log_dir)
        self.services.provide(tasks)
        self.on_close(tasks.close)
        forget = self.executor.add_notice_source(tasks)  # endings ride on the next result

        async def stop_notices() -> None:
            forget()

        self.on_close(stop_notices)

    def _activate_tools(self) -> None:
        contributions: list[ToolContribution] = []
        for extra in self._extra_tools:
            if isinstance(extra, BaseTool):
                self.registry.register(extra, source="user")
            else:
                contributions.append(self._as_contribution(extra, "Runtime(tools=...)"))
        for path in self.config.tools.load:
            with self._diagnosing(f"[tools] load {path!r}"):
                contributions.append(load_tool_path(path))
        if self._builtins:
            contributions.extend(builtin_contributions())
        if self._plugins:
            contributions.extend(entry_point_contributions(self.diagnostics))
        self._contributions = contributions
        activation = Activation(
            self.registry,
            self.services,
            self.env.capabilities,
            self.profile,
            self.policy,
            self.diagnostics,
        )
        activation.activate(contributions)
        self._check_patterns()

    async def _wire_mcp(self) -> None:
        """Mount the configured MCP servers (closed with the runtime) and set up deferred
        disclosure: `select_tools`, its executor guard, and `model_tools()`."""
        mcp = self.config.mcp
        if not hasattr(self, "disclosure"):  # kept across close() and start() again
            self.disclosure = DeferredTools(
                self.registry,
                self._is_switched_on,
                enabled=mcp.select_tools,
                defer_mcp=mcp.defer_mcp_tools,
            )
            self.executor.guards.append(self.disclosure.guard)
            self.executor.missing.append(self.disclosure.describe_missing)
            # late binding: start() after close() builds a new manager
            self.executor.missing.append(lambda name: self.mcp.describe_missing(name))  # noqa: PLW0108
        self.services.provide(self.disclosure)
        self.mcp = McpManager(
            self.workspace_path,
            mcp,
            self.registry,
            events=self.events,
            diagnostics=self.diagnostics,
            max_text=self.config.output.max_chars,
            disclosure="deferred" if mcp.select_tools and mcp.defer_mcp_tools else "inline",
        )
        self.services.provide(self.mcp)
        self.on_close(self.mcp.close)
        # An untrusted workspace's own mcp.json is not read: its commands would run now.
        specs, self.mcp.invalid = load_specs(
            self.workspace_path, mcp, self.diagnostics, trusted_workspace=self.trusted
        )
        if self.mcp_for is not None:
            specs = servers_for(specs, self.mcp_for)
        await self.mcp.start(specs)

    def add_mcp_config(self, path: str | Path) -> None:
        """Mount the servers of one more mcp.json file too (call before `start()`)."""
        mcp = self.config.mcp
        files = [*mcp.config_files, str(Path(path).expanduser().resolve())]
        self.config = self.config.model_copy(
            update={"mcp": mcp.model_copy(update={"config_files": files})}
        )

    def model_tools(self) -> ModelTools[ToolInfo]:
        """The tools an agent loop should send with its next model request, plus the
        deferred-tool announcement to add to the conversation (None when nothing changed)."""
        return self.disclosure.shape(self.tools(), lambda info: info.name)

    def _as_contribution(self, extra: ExtraTool, origin: str) -> ToolContribution:
        if isinstance(extra, ToolContribution):
            return extra
        if isinstance(extra, str):
            return load_tool_path(extra)
        if isinstance(extra, type) and issubclass(extra, BaseTool):
            return ToolContribution.of(extra, source="user", origin=origin)
        raise ToolLoadError(f"{origin}: {extra!r} is not a tool, a tool class or a tool path")

    @contextlib.contextmanager
    def _diagnosing(self, source: str) -> Any:
        try:
            yield
        except ToolLoadError as exc:
            self.diagnostics.append(Diagnostic("error", source, str(exc)))

    def _check_patterns(self) -> None:
        known = known_names(self._contributions, self.registry)
        fields = (
            ("[tools] enabled", self.config.tools.enabled),
            ("[tools] disabled", self.config.tools.disabled),
        )
        for field_name, patterns in fields:
            for issue in find_inactive_patterns(patterns, known.__contains__):
                self.diagnostics.append(
                    Diagnostic("warning", field_name, issue.message("the configuration"))
                )

    async def _check_rules(self) -> None:
        """Rules that can match nothing are warnings; a rule's failing example stops the
        start (checked through the tools' own matchers, so only now)."""
        known = known_names(self._contributions, self.registry)
        try:
            self.diagnostics += await check_rules(self.permissions.rules, self.registry, known)
        except ConfigError:
            await self.close()
            raise

    def _is_switched_on(self, name: str, source: Source) -> bool:
        return self.policy.is_active(name, source) and self.profile.policy.is_active(name, source)

    @staticmethod
    def _switched_off_text(name: str) -> str:
        return (
            f'Tool "{name}" is switched off by the tool policy ([tools] enabled/disabled or the '
            "profile). Use another tool, or ask the user to enable it."
        )

    def _policy_guard(self, call: ToolCall, entry: RegisteredTool) -> str | None:
        if self._is_switched_on(entry.name, entry.source):
            return None
        return self._switched_off_text(entry.name)

    def _describe_switched_off(self, name: str) -> str | None:
        for contribution in self._contributions:
            if contribution.name == name and not self._is_switched_on(name, contribution.source):
                return self._switched_off_text(name)
        return None

    # -- tools ---------------------------------------------------------------------------

    def register_tool(
        self, tool: BaseTool, *, source: Source = "user", disclosure: Disclosure = "inline"
    ) -> Callable[[], None]:
        """Add (or replace) a tool; returns a function that removes it again."""
        return self.registry.register(tool, source=source, disclosure=disclosure)

    def register_host_tool(
        self,
        name: str,
        description: str,
        parameters: JsonSchema,
        handler: HostHandler,
        *,
        disclosure: Disclosure = "inline",
    ) -> Callable[[], None]:
        """A tool described by a JSON schema and run by `handler(args, ctx)` in the host."""
        return self.register_tool(
            HostTool(name, description, parameters, handler), source="user", disclosure=disclosure
        )

    def tools(self) -> list[ToolInfo]:
        """The active tools, sorted by name."""
        return [
            ToolInfo(e.name, e.tool.description, e.tool.parameters, e.source, e.disclosure)
            for e in self.registry.entries()
            if self._is_switched_on(e.name, e.source)
        ]

    # -- calling -------------------------------------------------------------------------

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        return self.events.subscribe(listener)

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
        return await self.executor.run_batch([self._as_call(c) for c in calls], cancel=cancel)

    def _next_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    def _as_call(self, call: ToolCall | Mapping[str, Any]) -> ToolCall:
        if isinstance(call, ToolCall):
            return call
        return ToolCall(
            str(call.get("id") or self._next_id()), str(call.get("name", "")), call.get("arguments")
        )
