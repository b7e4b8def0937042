"""Bash: run a shell command in the workspace, in the foreground or as a background task."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.loader import user_config_dir
from deftly.config.output import OutputConfig
from deftly.config.shell import ShellConfig
from deftly.contract.accesses import Access, Accesses, AllAccess, FileAccess, Operation, WriteHow
from deftly.contract.describe import describe
from deftly.contract.display import CommandDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits, ToolUpdate
from deftly.contract.traits import traits_of
from deftly.execution.result_builder import ResultBuilder
from deftly.features.shell.format import format_size, record
from deftly.features.shell.fullscreen import full_screen_refusal, may_be_full_screen
from deftly.features.shell.harmless import harmless_problem, prefix_rules
from deftly.features.shell.mentions import may_name_secrets, named_secrets
from deftly.features.shell.readonly import not_read_only
from deftly.features.shell.rules import CommandMatcher
from deftly.features.shell.targets import (
    may_name_control_files,
    may_redirect,
    named_control_files,
    redirect_targets,
)
from deftly.features.shell.tasks import (
    ONE_SHOT_BACKGROUND,
    BackgroundTasks,
    ShellTask,
    TaskError,
    signal_name,
)
from deftly.policy.control import ControlFiles
from deftly.policy.paths import Workspace
from deftly.policy.rules import literal_rule
from deftly.registry.registry import ToolRegistry
from deftly.session.tasks import TaskStatus, format_duration

LINE_CHARS = 2_000
FOOTER_CHARS = 1_500
_EXIT_HINTS = {
    126: " (126 usually means a file was found but is not executable)",
    127: " (127 usually means the command was not found)",
}


_USER_CONTROL = ControlFiles()
"""The default when no runtime provides its control files: looked up on first use."""


class BashParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1,
        description="The command line to run, e.g. `pytest -q tests/unit`. It runs in the "
        "workspace directory with no input (stdin is closed).",
    )
    timeout: int | None = Field(
        None,
        ge=1,
        description="Seconds to allow. The defaults and maximums (different for foreground "
        "and background commands) are in the tool description.",
    )
    run_in_background: bool = Field(
        False,
        description="Start the command as a background task and return its task id at once. "
        "For servers, watchers and long builds; you are notified when it ends.",
    )
    description: str | None = Field(
        None,
        max_length=200,
        description="A few words on what the command does (shown to the user, and the name "
        "of a background task).",
    )


def _short(command: str, width: int = 50) -> str:
    line = " ".join(command.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class BashTool(Tool[BashParams]):
    """Bash: run a shell command in the workspace, in the foreground or as a background task."""

    name = "Bash"
    title = "Run a shell command"
    description = describe("bash.md")
    params = BashParams
    traits = ToolTraits(destructive=True, open_world=True)

    def __init__(
        self,
        tasks: BackgroundTasks,
        config: ShellConfig,
        output: OutputConfig,
        workspace: Workspace,
        registry: ToolRegistry,
        control: ControlFiles = _USER_CONTROL,
    ) -> None:
        self.tasks = tasks
        self.config = config
        self.output = output
        self.workspace = workspace
        self.registry = registry
        self._given_control = control

    # -- description ---------------------------------------------------------------------

    def background_enabled(self) -> bool:
        """Background tasks need someone to follow them: a runtime that outlives the call
        (not a one-shot `deftly call`) and registered tools that read a task's output and
        stop tasks (traits `reads_task_output`, `stops_tasks`: TaskOutput, TaskStop)."""
        if not self.tasks.background:
            return False
        traits = [t for t in (traits_of(entry.tool) for entry in self.registry) if t]
        return any(t.reads_task_output for t in traits) and any(t.stops_tasks for t in traits)

    def description_vars(self) -> Mapping[str, object]:
        cfg = self.config
        if self.background_enabled():
            background = (
                "Set `run_in_background: true` for servers, watchers and long builds: the "
                "call returns a task id at once (default timeout "
                f"{cfg.background_timeout} s, at most {cfg.max_background_timeout} s) and you "
                "are notified when the task ends, so do not poll it. WaitFor waits for tasks, "
                "TaskOutput shows a task's newest output, TaskStop stops one, TaskList lists "
                "them."
            )
            on_timeout = (
                "A foreground command still running at its timeout is moved to the "
                "background and keeps running; the result gives its task id."
                if cfg.on_timeout == "background"
                else "A foreground command still running at its timeout is killed."
            )
        else:
            background = (
                "Background execution is not available here: do not set `run_in_background`."
            )
            on_timeout = "A foreground command still running at its timeout is killed."
            if not self.tasks.background:
                background = (
                    "Every command runs in the foreground and must finish within its timeout."
                )
        sandbox = self.tasks.launcher.sandbox.model_text(background=self.background_enabled())
        return {
            "SHELL_NAME": self.tasks.launcher.shell_name,
            "TIMEOUT": cfg.timeout,
            "MAX_TIMEOUT": cfg.max_timeout,
            "ON_TIMEOUT": on_timeout,
            "BACKGROUND": background,
            "OUTPUT_LIMIT": format_size(cfg.output_limit_bytes)
            if cfg.output_limit_bytes
            else "no limit",
            "MAX_CHARS": f"{self.output.max_chars:,}",
            "SANDBOX": sandbox,
            "LONG_RUNNING": "belong in a background task"
            if self.background_enabled()
            else "cannot run here",
        }

    # -- resolve -------------------------------------------------------------------------

    def resolve(self, args: BashParams) -> ToolExecution | ToolResult:
        command = args.command
        if not command.strip():
            return ToolResult.error(
                "The command is empty: pass the shell command to run in `command`."
            )
        if "\x00" in command:
            return ToolResult.error(
                "The command contains a NUL character, which no shell can run. Remove it "
                "and call Bash again."
            )
        if self.tasks.refusal is not None:
            return ToolResult.error(
                f"Bash cannot run commands here: {self.tasks.refusal}. Commands are refused "
                "rather than run without the sandbox. Tell the user; they can install "
                'bubblewrap or set [shell] sandbox = "none".'
            )
        matcher = CommandMatcher(command)
        screen = (
            full_screen_refusal(matcher.split, command) if may_be_full_screen(command) else None
        )
        if screen is not None:
            return ToolResult.error(screen)
        background = args.run_in_background
        if background and not self.tasks.background:
            return ToolResult.error(ONE_SHOT_BACKGROUND)
        if background and not self.background_enabled():
            return ToolResult.error(
                "Background execution is not available here (the TaskOutput and TaskStop tools "
                "are not enabled). Run the command without run_in_background."
            )
        cfg = self.config
        limit = cfg.max_background_timeout if background else cfg.max_timeout
        if args.timeout is not None and args.timeout > limit:
            kind = "background" if background else "foreground"
            hint = (
                " Use run_in_background for longer commands (up to "
                f"{cfg.max_background_timeout} s)."
                if not background and self.background_enabled()
                else " Use a smaller timeout."
            )
            return ToolResult.error(
                f"timeout {args.timeout} is out of range: a {kind} command may run at most "
                f"{limit} seconds.{hint}"
            )
        timeout = args.timeout or (cfg.background_timeout if background else cfg.timeout)
        cwd = self.workspace.cwd or self.workspace.root
        description = (args.description or "").strip() or None
        verb = "Starting in the background" if background else "Running"

        async def run(ctx: ToolContext) -> ToolResult:
            if background:
                return await self._background(command, timeout, description, ctx.identity.agent_id)
            return await self._foreground(ctx, command, timeout, description)

        return ToolExecution(
            execute=run,
            approval_rule=literal_rule(self.name, command),
            matches_rule=matcher.one,
            matches_rules=matcher.together,
            accesses=self._accesses(matcher, cwd),
            display=CommandDisplay(command=command, cwd=str(cwd), description=description),
            description=f"{verb}: {_short(command)}",
            unverifiable=partial(self._unverifiable, matcher, cwd),
            not_read_only=lambda: not_read_only(matcher.split),
            session_rules=partial(prefix_rules, self.name, matcher),
            harmless=partial(self._harmless, matcher, cwd),
        )

    def _harmless(self, matcher: CommandMatcher, cwd: Path, allowed: Sequence[str]) -> str | None:
        return harmless_problem(matcher, allowed, self.workspace, cwd, self._control)

    @functools.cached_property
    def _control(self) -> ControlFiles:
        """The runtime's control files (the engine's), else the user's config directory."""
        given = self._given_control
        return given if given is not _USER_CONTROL else ControlFiles.of([user_config_dir()])

    def _accesses(self, matcher: CommandMatcher, cwd: Path) -> Accesses | None:
        """Anything at all (the call runs alone), plus what the permission engine must
        see: the files its output is redirected to (writes), the secret or `.git` files it
        names (reads), and deftly's control files it names (writes, unless the command is
        proven to only read). The command is parsed only when a cheap check says it may
        hold one of these."""
        command = matcher.command
        secrets = may_name_secrets(command)
        redirects = may_redirect(command)
        control = may_name_control_files(command)
        if not (secrets or redirects or control):
            return None
        home = self.workspace.home
        items: list[Access] = []
        split = matcher.split
        if redirects:
            written = redirect_targets(split, cwd, home).paths
            items += [FileAccess(Operation.WRITE, p, how=WriteHow.IN_PLACE) for p in written]
        if secrets:
            items += [FileAccess(Operation.READ, p) for p in named_secrets(split, cwd, home)]
        if control:
            named = named_control_files(split, cwd, home, self._control)
            if named:
                reads = not_read_only(split) is None
                operation = Operation.READ if reads else Operation.WRITE
                items += [FileAccess(operation, path) for path in named]
        if not items:
            return None
        return Accesses((AllAccess(), *items))

    def _unverifiable(self, matcher: CommandMatcher, cwd: Path) -> str | None:
        """Why what the command runs or writes cannot be known before it runs, or None."""
        command = matcher.command
        split = matcher.split
        if split.opaque:
            return "; ".join(split.opaque)
        if may_redirect(command):
            unknown = redirect_targets(split, cwd, self.workspace.home).unknown
            if unknown:
                return "; ".join(unknown)
        return None

    # -- execute -------------------------------------------------------------------------

    async def _background(
        self, command: str, limit: int, description: str | None, owner: str
    ) -> ToolResult:
        try:
            task = await self.tasks.start(
                command, background=True, time_limit=limit, description=description, owner=owner
            )
        except TaskError as exc:
            return ToolResult.error(str(exc))
        text = record(
            [
                ("task_id", task.id),
                ("status", "running"),
                ("description", description),
                ("log_path", task.log.path if task.log.persisted else None),
                ("timeout", f"stopped if still running after {format_duration(limit)}"),
                (
                    "next_step",
                    "carry on with other work: you are notified automatically when it ends, "
                    "so do not poll. WaitFor waits for it, TaskOutput shows its newest "
                    "output, TaskStop stops it.",
                ),
            ]
        )
        return ToolResult.ok(f"Started background task {task.id}.\n{text}")

    def _head_budget(self) -> int:
        budget = self.output.max_chars - self.output.tail_chars - FOOTER_CHARS
        return max(budget, 500)

    async def _foreground(
        self, ctx: ToolContext, command: str, limit: int, description: str | None
    ) -> ToolResult:
        builder = ResultBuilder(self._head_budget(), LINE_CHARS)
        started: list[ShellTask] = []

        def sink(text: str) -> None:
            if not builder.full:
                builder.write(text)
                if builder.truncated and started and not started[0].log.persisted:
                    started[0].log.persist()  # the model's copy is cut: keep the whole
            ctx.report(ToolUpdate("stdout", text=text))

        try:
            task = await self.tasks.start(
                command, description=description, sink=sink, owner=ctx.identity.agent_id
            )
        except TaskError as exc:
            return ToolResult.error(str(exc))
        started.append(task)
        interrupted = "interrupted: the call was cancelled"
        try:
            await self.tasks.wait_any([task], limit, ctx.cancel)
            if task.running and ctx.cancelled:
                await self.tasks.stop(task, TaskStatus.KILLED, interrupted)
            elif task.running:
                if self.config.on_timeout == "background" and self.background_enabled():
                    self.tasks.move_to_background(task, self.config.background_timeout)
                    return self._moved(task, builder, limit)
                reason = f"killed at its timeout of {format_duration(limit)}"
                await self.tasks.stop(task, TaskStatus.TIMED_OUT, reason)
        except asyncio.CancelledError:
            if task.running and not task.background:
                self.tasks.stop_soon(task, TaskStatus.KILLED, interrupted)
            raise
        return self._finished(task, builder)

    def _moved(self, task: ShellTask, builder: ResultBuilder, limit: int) -> ToolResult:
        lines = [
            f"The command was still running after {format_duration(limit)}, so it was moved "
            f"to the background as task {task.id}; it keeps running.",
            record(
                [
                    ("task_id", task.id),
                    ("status", "running"),
                    ("log_path", task.log.path if task.log.persisted else None),
                    (
                        "timeout",
                        "stopped if still running after another "
                        f"{format_duration(self.config.background_timeout)}",
                    ),
                    (
                        "next_step",
                        "carry on with other work: you are notified automatically when it "
                        "ends. WaitFor waits for it, TaskOutput shows its newest output, "
                        "TaskStop stops it.",
                    ),
                ]
            ),
        ]
        if builder.text:
            lines += ["", "output so far:", builder.text]
        return ToolResult.ok("\n".join(lines), truncated=builder.truncated)

    def _finished(self, task: ShellTask, builder: ResultBuilder) -> ToolResult:
        match task.status:
            case TaskStatus.COMPLETED:
                result = builder.ok(
                    "The command finished (exit code 0)."
                    if builder.text
                    else "The command finished with no output (exit code 0)."
                )
            case TaskStatus.FAILED if task.reason:
                result = builder.error(
                    f"The command was stopped: {task.reason}. Send large output to a file "
                    "(`command > out.log 2>&1`) and read it in parts with Read or Grep."
                )
            case TaskStatus.FAILED if task.signal is not None:
                result = builder.error(
                    f"The command was killed by {signal_name(task.signal)} (signal {task.signal})."
                )
            case TaskStatus.FAILED:
                code = task.exit_code if task.exit_code is not None else -1
                result = builder.error(
                    f"The command failed with exit code {code}{_EXIT_HINTS.get(code, '')}."
                )
            case TaskStatus.TIMED_OUT:
                instead = (
                    "or run it with run_in_background"
                    if self.background_enabled()
                    else "or split it into shorter steps"
                )
                result = builder.error(
                    f"The command was {task.reason or 'killed at its timeout'}. Give it a "
                    f"longer timeout (up to {self.config.max_timeout} s), {instead}."
                )
            case _:
                result = builder.error(f"The command was stopped ({task.reason or 'killed'}).")
        text = result.text
        notes: list[str] = []
        if task.leftovers:
            notes.append(
                f"note: the command exited leaving {task.leftovers} process(es) running in the "
                "background; they were stopped. Start servers and watchers with "
                "run_in_background instead."
            )
        if builder.truncated:
            notes.append(self._footer(task))
        if notes:
            text = text.rstrip("\n") + "\n\n" + "\n\n".join(notes)
        return result.with_(output=text, truncated=builder.truncated or result.truncated)

    def _footer(self, task: ShellTask) -> str:
        out = task.log
        lines = [
            f"[the output was cut: the command printed {format_size(out.total)} "
            f"({out.total:,} bytes); the start is above, the end below]"
        ]
        if out.persisted:
            lines.append(f"log_path: {out.path}")
            if not out.complete:
                lines.append(f"log_holds: the first {format_size(out.kept)} (the log limit)")
            lines.append(
                "next_step: page through log_path with Read (line_offset, n_lines) or search "
                "it with Grep."
            )
        elif out.error:
            lines.append(f"The full output could not be kept: {out.error}.")
        tail = out.tail_text()
        tail = tail[-self.output.tail_chars :] if self.output.tail_chars else ""
        if tail:
            lines += [f"--- last {len(tail):,} characters ---", tail]
        return "\n".join(lines)
