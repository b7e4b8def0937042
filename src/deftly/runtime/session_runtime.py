"""The session scope: what every agent of one session shares.

The environment, the workspace's path policy, the session directory (claimed while the
scope is open), the configuration and trust, the permission engine (mode, rules, session
approvals), the event bus, the session's registry (tools mounted once per session: MCP),
and each feature's session services (file tracker, background tasks, MCP connections,
skills), offered by type in `services`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from deftly.config.loader import LoadedConfig, user_config_dir
from deftly.config.model import DeftlyConfig
from deftly.config.trust import TrustStore
from deftly.contract.diagnostics import Diagnostic
from deftly.env.base import ExecEnv
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.execution.spill import OutputBudget
from deftly.features.api import Closer, Closers, Feature, RunOptions, SessionContext
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from deftly.policy.permissions import Mode, PermissionEngine, RuleBook
from deftly.registry.registry import ToolRegistry
from deftly.registry.services import Services
from deftly.runtime.approvals import keep_session_approvals
from deftly.session import Session, StateStore, prune_sessions, session_dir
from deftly.session.tasks import TaskBoard, TaskEnded

log = logging.getLogger(__name__)


class SessionRuntime:
    """One session of one workspace: the scope every agent of the session shares.

    Built whole at construction (bad rules or a bad mode fail here); `start()` claims
    the session directory and runs each feature's session step; `close()` undoes them,
    newest first, and a later `start()` builds fresh session services.
    """

    def __init__(
        self,
        *,
        workspace_path: Path,
        home: Path,
        loaded: LoadedConfig,
        env: ExecEnv,
        session_id: str,
        mode: Mode | str,
        trusted: bool,
        features: Sequence[Feature],
        diagnostics: list[Diagnostic],
    ) -> None:
        self.workspace_path = workspace_path
        self.home = home
        self.loaded = loaded
        self.config: DeftlyConfig = loaded.config
        self.env = env
        self.session_id = session_id
        self.session_dir = session_dir(workspace_path, session_id, home)
        self.session_area = env.session_area(self.session_dir)
        """The session directory as the environment sees it (what the model is shown)."""
        self.spill_dir = self.session_area / "spill"
        self.trusted = trusted
        self.features = tuple(features)
        self.diagnostics = diagnostics
        self.options = RunOptions()
        self.workspace = Workspace(workspace_path, home=env.home(), probe=env.path_probe())
        self.workspace.add_directory(self.spill_dir)
        for extra in self.config.permissions.additional_directories:
            self.workspace.add_directory(Path(extra).expanduser())
        self.events = EventBus()
        self.registry = ToolRegistry()
        """Tools mounted once for the whole session (MCP); agents' registries layer over it."""
        self.services = Services()
        self.permissions = self._permission_engine(mode)
        self._closers = Closers()
        self.session: Session | None = None
        """The open session (id, directory, shared claim, state store) while started."""
        self.context: SessionContext | None = None
        """What the features were given at the last `start()` (None while closed)."""

    def _permission_engine(self, mode: Mode | str) -> PermissionEngine:
        section = self.config.permissions
        rules = RuleBook.from_lists(
            allow=section.allow, ask=section.ask, deny=section.deny, origin=self.loaded.origin
        )
        # The user's config and the record of trusted folders loosen the leash too.
        control = ControlFiles.of([user_config_dir()], files=[TrustStore(self.home).path])
        engine = PermissionEngine(self.workspace, rules, mode, control=control)
        engine.harmless_commands = tuple(section.harmless_commands)
        engine.on_mode_change(
            lambda old, new: self.events.emit(
                RuntimeNotice("permission_mode", f"permission mode: {old} -> {new}", str(new))
            )
        )
        return engine

    @property
    def store(self) -> StateStore:
        """The session's state store (in memory only while the session is not open)."""
        if self.session is None:
            return StateStore(None)
        return self.session.store

    def with_options(
        self,
        *,
        background: bool | None = None,
        only_tools: frozenset[str] | None = None,
        plugins: bool | None = None,
        connect_in_background: bool | None = None,
    ) -> None:
        """Change how the host will use the runtime (before `start()`); None keeps a value."""
        options = self.options
        self.options = RunOptions(
            background=options.background if background is None else background,
            only_tools=options.only_tools if only_tools is None else only_tools,
            plugins=options.plugins if plugins is None else plugins,
            connect_in_background=(
                options.connect_in_background
                if connect_in_background is None
                else connect_in_background
            ),
        )

    def budget(self) -> OutputBudget:
        """The output budget of every agent's results (from `[output]`)."""
        out = self.config.output
        return OutputBudget(out.max_chars, out.retained_chars, out.head_chars, out.tail_chars)

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> SessionContext:
        """Claim the session, then run every feature's session step."""
        await self._hold_session()
        # Scratch files of atomic writes killed half-way (by any earlier process) go now.
        await asyncio.to_thread(self.env.keep_scratch_journal, self.home / "scratch")
        self._provide_base_services()
        self._provide_task_board()
        ctx = SessionContext(
            config=self.config,
            env=self.env,
            workspace=self.workspace,
            session_id=self.session_id,
            session_dir=self.session_dir,
            session_area=self.session_area,
            events=self.events,
            services=self.services,
            registry=self.registry,
            permissions=self.permissions,
            diagnostics=self.diagnostics,
            trusted=self.trusted,
            options=self.options,
            closers=self._closers,
            store=self.store,
        )
        self.context = ctx
        self._closers.add_sync(keep_session_approvals(self.store, self.permissions, self.events))
        try:
            for feature in self.features:
                await feature.start_session(ctx)
        except BaseException:
            await ctx.finish_alongside(cancel=True)
            raise
        await ctx.finish_alongside()
        return ctx

    async def close(self) -> None:
        """Undo every session step, newest first; the session services are gone after."""
        await self._closers.close_all()
        self.services.clear()
        self.context = None
        self.session = None

    def on_close(self, closer: Closer) -> None:
        """Run `closer` when the session scope closes (newest first)."""
        self._closers.add(closer)

    def _provide_base_services(self) -> None:
        """What every tool's constructor may ask for, by type (never the runtime)."""
        for instance in (
            self.env,
            self.workspace,
            self.config,
            self.events,
            *(getattr(self.config, name) for name in type(self.config).model_fields),
        ):
            self.services.provide(instance)
        self.services.provide(self.env, ExecEnv)
        self.services.provide(self.permissions.control)  # Bash finds commands naming them

    def _provide_task_board(self) -> None:
        """The session's background tasks of every kind; each ending is also an event."""
        board = TaskBoard()

        def announce(notice: TaskEnded) -> None:
            self.events.emit(RuntimeNotice("task_finished", notice.message, notice))

        board.listen(announce)
        self.services.provide(board)
        self._closers.add_sync(board.close)

    async def _hold_session(self) -> None:
        """Open (or resume) the session, claiming its directory so no other runtime prunes
        it, then remove this workspace's sessions left untouched for `[session] keep_days`."""
        session = await asyncio.to_thread(
            Session.open, self.workspace_path, self.home, self.session_id
        )
        self.session = session
        self._closers.add_sync(session.close)
        if session.problem is not None:
            self.diagnostics.append(Diagnostic("warning", "session", session.problem))
            return
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
