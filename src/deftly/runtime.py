"""The `Runtime` facade: one workspace, wired.

It owns the execution environment, the workspace's path policy, the session directory,
the tool registry, hooks and the executor, and closes whatever its tools started.

    async with Runtime("path/to/repo") as rt:
        result = await rt.call("Read", {"path": "README.md"})
        print(result.text)
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from deftly.config.loader import LoadedConfig, load_config, parse_config
from deftly.config.model import DeftlyConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ConfigError, ToolLoadError
from deftly.contract.schema import JsonSchema
from deftly.contract.tool import BaseTool, CancelToken
from deftly.env.base import ExecEnv
from deftly.env.local import LocalEnv
from deftly.execution.calls import CallResult, ToolCall
from deftly.execution.events import EventBus, EventListener
from deftly.execution.executor import Executor
from deftly.execution.hooks import AfterHook, BeforeHook, HookChain
from deftly.execution.spill import OutputBudget, Spiller
from deftly.policy.approval import Approver
from deftly.policy.paths import Workspace
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
from deftly.session import data_home, new_session_id, session_dir
from deftly.tools import builtin_contributions

log = logging.getLogger(__name__)

ExtraTool = BaseTool | ToolContribution | type[BaseTool] | str
Closer = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """What a client is told about one tool."""

    name: str
    description: str
    parameters: JsonSchema
    source: Source
    disclosure: Disclosure

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "source": self.source,
            "disclosure": self.disclosure,
        }


class Runtime:
    """One workspace's tool runtime. Use it as an async context manager."""

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
    ) -> None:
        self.workspace_path = Path(workspace).expanduser().resolve()
        if not self.workspace_path.is_dir():
            raise ConfigError(f"The workspace {self.workspace_path} is not a directory.")
        self.loaded = self._load_config(config)
        self.config = self.loaded.config
        self.mode = mode or self.config.permissions.mode
        self.approve_asks = approve_asks
        self.approver = approver
        self.env = env or LocalEnv()
        self.home = Path(home).expanduser() if home else data_home()
        self.session_id = session_id or new_session_id()
        self.session_dir = session_dir(self.workspace_path, self.session_id, self.home)
        self.spill_dir = self.session_dir / "spill"
        self.workspace = Workspace(self.workspace_path, home=self.env.home())
        self.workspace.add_directory(self.spill_dir)
        for extra in self.config.permissions.additional_directories:
            self.workspace.add_directory(Path(extra).expanduser())
        self.profile = profile or Profile()
        self.policy = ToolPolicy.from_lists(self.config.tools.enabled, self.config.tools.disabled)
        self.diagnostics: list[Diagnostic] = []
        self.events = EventBus()
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
        self._provide_services()
        self._wire_files()
        self._activate_tools()

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

    def _load_config(self, config: DeftlyConfig | Mapping[str, Any] | None) -> LoadedConfig:
        if isinstance(config, DeftlyConfig):
            return LoadedConfig(config)
        if config is not None:
            return LoadedConfig(parse_config(config, "the configuration passed to Runtime"))
        return load_config(self.workspace_path)

    def _budget(self) -> OutputBudget:
        out = self.config.output
        return OutputBudget(out.max_chars, out.retained_chars, out.head_chars, out.tail_chars)

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

    def _wire_files(self) -> None:
        """The file tools' shared memory of what was read and written (stale-read guard)."""
        from deftly.tools.file.tracker import FileTracker

        self.services.provide(FileTracker(self.config.files.stale_hash_max_bytes))

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
