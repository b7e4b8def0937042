"""Shell tasks: every command Bash starts, in the foreground or the background.

One `BackgroundTasks` manager per runtime starts commands (through the `ExecEnv`), reads
their merged output into an `OutputLog`, applies timeouts and the output limit, stops
them (SIGTERM to the whole session, a grace period, SIGKILL), and posts background tasks
on the session's `TaskBoard` (`deftly.session.tasks`), beside the tasks of other kinds:
ids like `bash-1a2b3c4d`, status, exit code, times, log. When a background task ends, the
board keeps a notice for the model's next turn (and a `RuntimeNotice` event goes out); a
task the model already heard about from a tool (WaitFor, TaskOutput, TaskStop, TaskList)
is not announced again. When the runtime closes, every task still running is stopped,
except those explicitly detached.

A command that exits while processes it started in the background still run has those
processes stopped too (they would be orphans nobody can reach); commands meant to keep
running belong in a background task. Under the sandbox (the default where bubblewrap
works) each command has a PID namespace of its own, so nothing it starts, `setsid` and
daemons included, outlives it. Without it, deftly is a child subreaper (`env.adopt_orphans`):
a process that left the command's session (`setsid cmd &`, `setsid -f`, a double fork)
comes back to deftly as a child when its parent exits, and carries the task's mark in its
environment (`DEFTLY_TASK=<task id>`, inherited by everything the command starts). When
the task ends, is stopped, or the runtime closes, deftly's marked children of that task
(one pass over /proc, environments read only for its own children) are stopped with
their sessions, round after round until none is left, and their exit collected. What
clears its environment (`env -i`) before leaving its session is not recognised.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from deftly.config.shell import ShellConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ToolError
from deftly.contract.fs import Process
from deftly.contract.records import frozen
from deftly.contract.tool import CancelToken
from deftly.env.base import ExecEnv
from deftly.env.tree import PROCESS_TREE_MISSING, exit_status
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.features.shell.format import format_size
from deftly.features.shell.launch import ShellLauncher
from deftly.features.shell.output import OutputLog
from deftly.policy.paths import Workspace
from deftly.session.tasks import OutputSnapshot, TaskBoard, TaskEnded, TaskStatus, format_duration

log = logging.getLogger(__name__)

READ_BYTES = 256 * 1024
DRAIN_SECONDS = 0.25
POLL_SECONDS = 0.05
KEEP_FINISHED = 200
MAX_ENDED_SESSIONS = 10_000
TASK_MARK = "DEFTLY_TASK"
"""The environment variable naming the task a process belongs to (see the module doc)."""
ADOPTED_ROUNDS = 20
ONE_SHOT_BACKGROUND = (
    "Background tasks are not available here: this is a one-shot call (`deftly call`), "
    "which exits when the call ends and could not follow the task. Run the command in the "
    "foreground, or use `deftly batch` (a Bash call with run_in_background, then WaitFor), "
    "`deftly serve`, or the Python library (deftly.Runtime), which keep running."
)

Sink = Callable[[str], None]


class TaskError(ToolError):
    """A task could not be started; the message is written for the model (a
    `ToolError`, so one that escapes a tool becomes that error result)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def _is_signal(number: int) -> bool:
    try:
        signal.Signals(number)
    except ValueError:
        return False
    return True


def signal_name(number: int) -> str:
    """A signal number's name ("SIGTERM")."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@frozen
class TaskNotice(TaskEnded):
    """A background command ended and the model has not been told yet (the board's
    notice with what is particular to a command)."""

    exit_code: int | None
    command: str
    log_path: Path | None


class ShellTask:
    """One command: its process, its output, and how it ended. A `BackgroundTask` of
    kind "bash" (`deftly.session.tasks`) once it runs in the background."""

    kind = "bash"

    def __init__(
        self,
        task_id: str,
        command: str,
        description: str,
        cwd: Path,
        process: Process,
        log: OutputLog,
        *,
        background: bool,
        manager: BackgroundTasks | None = None,
    ) -> None:
        self.id = task_id
        self.manager = manager
        """Who started it (and stops it)."""
        self.command = command
        self.description = description
        self.cwd = cwd
        self.process = process
        self.log = log
        self.background = background
        self.started_at = time.time()
        self.started_mono = time.monotonic()
        self.ended_at: float | None = None
        self.ended_mono: float | None = None
        self.status = TaskStatus.RUNNING
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.reason: str | None = None
        """Why it ended, when not simply by exiting: stopped, timed out, too much output."""
        self.timeout: float | None = None
        self.sandboxed = False
        """Runs under bubblewrap (in a PID namespace of its own)."""
        self.owner = ""
        """The `agent_id` of the agent that started it ("" when not known)."""
        self.leftovers = 0
        """Processes still running when the command exited, which were then stopped."""
        self.detached = False
        """Handed off to outlive the runtime: not stopped on close, output straight to disk."""
        self.reported = False
        """The model was told how it ended (by a tool or a notice)."""
        self.sinks: list[Sink] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._done = asyncio.Event()
        self._stopper: asyncio.Future[None] | None = None
        self._stop_status: TaskStatus | None = None
        self._stop_reason: str | None = None
        self._pump: asyncio.Task[None] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def pid(self) -> int:
        """The command's process id (also its session and group id)."""
        return self.process.pid

    @property
    def running(self) -> bool:
        """Whether the task has not ended yet."""
        return not self._done.is_set()

    @property
    def stopping(self) -> bool:
        """Whether a stop was started and the task has not ended yet."""
        return self._stopper is not None and self.running

    def runtime_seconds(self, now: float | None = None) -> float:
        """How long it ran (until now while it runs)."""
        end = self.ended_mono if self.ended_mono is not None else (now or time.monotonic())
        return max(end - self.started_mono, 0.0)

    def age_seconds(self, now: float | None = None) -> float:
        """How long ago it started."""
        return max((now or time.monotonic()) - self.started_mono, 0.0)

    async def wait(self, seconds: float | None = None) -> bool:
        """Wait for the end; True if it ended within `seconds` (None: no limit)."""
        if not self.running:
            return True
        try:
            await asyncio.wait_for(self._done.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def outcome(self) -> str:
        """How it ended (or that it runs), in words: `failed (exit code 2)`."""
        match self.status:
            case TaskStatus.RUNNING:
                return "running"
            case TaskStatus.COMPLETED:
                return "completed (exit code 0)"
            case TaskStatus.FAILED if self.reason:
                return f"failed ({self.reason})"
            case TaskStatus.FAILED if self.signal is not None:
                return f"failed (killed by {signal_name(self.signal)})"
            case TaskStatus.FAILED:
                return f"failed (exit code {self.exit_code})"
            case TaskStatus.TIMED_OUT:
                return f"timed_out ({self.reason or 'stopped at its timeout'})"
            case _:
                return f"killed ({self.reason or 'stopped'})"

    def output(self, limit: int) -> OutputSnapshot:
        """The newest output, at most `limit` bytes (the whole log is at its path)."""
        data = self.log.tail(limit) if limit > 0 else b""
        return OutputSnapshot(
            data.decode("utf-8", "replace"),
            self.log.total,
            more=len(data) < self.log.total,
            path=self.log.path if self.log.persisted else None,
        )

    async def stop(self, reason: str) -> None:
        """Stop the command and all it started, as killed for `reason`, and wait for it."""
        if self.manager is None:
            raise TaskError(f"Task {self.id} cannot be stopped: it has no manager.")
        await self.manager.stop(self, TaskStatus.KILLED, reason)

    def _decode(self, data: bytes, *, final: bool = False) -> str:
        return self._decoder.decode(data, final)


class BackgroundTasks:
    """The runtime's shell tasks. Start them with `start`, stop them with `stop`."""

    def __init__(
        self,
        env: ExecEnv,
        config: ShellConfig,
        log_dir: Path,
        *,
        workspace: Workspace | None = None,
        events: EventBus | None = None,
        background: bool = True,
        board: TaskBoard | None = None,
    ) -> None:
        self.env = env
        self.tree = env.process_tree
        """The env's process tree, or None: then only the started process is followed."""
        self.background = background
        """Whether background tasks can be offered at all: False for a one-shot caller
        (`deftly call`) that exits after one call and so could never follow one."""
        self.config = config
        self.log_dir = log_dir
        self.workspace = workspace
        self.events = events
        self.own_board = board is None
        """No session board was given: the manager keeps one of its own (and announces
        endings on `events` itself; a session's board is wired to its events already)."""
        self.board = board if board is not None else TaskBoard()
        """Where background commands are posted, with the session's other tasks."""
        if self.own_board and events is not None:
            self.board.listen(
                lambda notice: events.emit(RuntimeNotice("task_finished", notice.message, notice))
            )
        self.launcher = ShellLauncher(env, config, workspace)
        self._tasks: dict[str, ShellTask] = {}
        self._helpers: set[asyncio.Future[Any]] = set()
        self._ended_sessions: dict[int, int] = {}
        self._closing = False
        self._adopting: bool | None = None
        self._started_ids: set[str] = set()
        """Every task this manager started (their marks), for the sweep at close."""

    # -- set-up --------------------------------------------------------------------------

    @property
    def refusal(self) -> str | None:
        """Why commands cannot run at all (a sandbox asked for but not working)."""
        return self.launcher.sandbox.refusal

    @property
    def adopting(self) -> bool:
        """Orphans of unsandboxed commands come back to this process (a subreaper)."""
        if self._adopting is None:
            self._adopting = self.tree is not None and self.tree.adopt_orphans()
        return self._adopting

    async def check(self) -> list[Diagnostic]:
        """Probe what commands need (the sandbox, when configured); problems as diagnostics."""
        _ = self.adopting  # once per process: orphans come back to us from now on
        sandbox = self.launcher.sandbox
        problem = await sandbox.check()
        if problem is None:
            return []
        if sandbox.refusal is None:
            return [
                Diagnostic(
                    "warning",
                    "[shell] sandbox",
                    f"{problem}. Commands run without the sandbox (secrets not masked, "
                    "processes not confined), behind the permission rules only; install "
                    'bubblewrap, or set [shell] sandbox = "none" to run unconfined without '
                    "this warning.",
                )
            ]
        return [
            Diagnostic(
                "error",
                "[shell] sandbox",
                f"{problem}. Bash will refuse every command rather than run it unconfined; "
                'install bubblewrap or set [shell] sandbox = "auto" (falls back to running '
                'unconfined) or "none".',
            )
        ]

    # -- starting ------------------------------------------------------------------------

    def running_background(self) -> list[ShellTask]:
        """The background tasks still running."""
        return [t for t in self._tasks.values() if t.background and t.running]

    async def start(
        self,
        command: str,
        *,
        background: bool = False,
        time_limit: float | None = None,
        description: str | None = None,
        sink: Sink | None = None,
        cwd: Path | None = None,
        owner: str = "",
    ) -> ShellTask:
        """Start a command. A background task gets its log file and its timeout now; a
        foreground one is timed by its caller and may move to the background later.
        `owner` is the agent that started it: its ending is told to that agent."""
        if self._closing:
            raise TaskError("The runtime is closing; no new commands can start.")
        sandbox = self.launcher.sandbox
        if not sandbox.checked:  # at once, unless `check()` ran at start-up (it reports)
            await sandbox.check()
            if sandbox.unavailable is not None:
                log.warning("the shell sandbox is unavailable: %s", sandbox.unavailable)
        if self.refusal is not None:
            raise TaskError(f"Commands are refused: {self.refusal}.")
        if background and not self.background:
            raise TaskError(ONE_SHOT_BACKGROUND)
        if background and len(self.running_background()) >= self.config.max_background_tasks:
            raise TaskError(
                f"Too many background tasks are running ({self.config.max_background_tasks}, "
                "the [shell] max_background_tasks limit). Wait for one with WaitFor or stop "
                "one with TaskStop, then try again."
            )
        directory = cwd or (self.workspace.cwd if self.workspace else None) or Path.cwd()
        task_id = self._fresh_id()
        output = OutputLog(
            self.env,
            self.log_dir / f"{task_id}.log",
            cap_bytes=self.config.log_limit_bytes,
            tail_bytes=self.config.preview_bytes,
        )
        if self.launcher.sandbox.active and self.env.which(self.launcher.program) is None:
            # Inside bubblewrap a missing shell is only bwrap's exit code 1: say it plainly.
            raise TaskError(
                f"The command could not be started: the shell {self.launcher.program} was "
                "not found or is not executable; set [shell] shell to one that exists."
            )
        argv = await self.launcher.prepare(command, directory)
        _ = self.adopting
        try:
            process = await self.env.spawn(
                argv,
                cwd=directory,
                env={**self.launcher.environment(), TASK_MARK: task_id},
                stream_limit=READ_BYTES,
            )
        except (OSError, ValueError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            where = getattr(exc, "filename", None)
            raise TaskError(
                f"The command could not be started: {detail}"
                + (f" ({where})" if where else "")
                + f". The shell is {self.launcher.program} and the working directory "
                f"{directory}; check that both exist."
            ) from None
        task = ShellTask(
            task_id,
            command,
            (description or "").strip() or _short(command),
            directory,
            process,
            output,
            background=background,
            manager=self,
        )
        task.sandboxed = self.launcher.sandbox.active
        task.owner = owner
        self._started_ids.add(task_id)
        if sink is not None:
            task.sinks.append(sink)
        self._tasks[task_id] = task
        if background:
            self.board.post(task)
            output.persist()
            self._arm_timeout(task, time_limit)
        task._runner = asyncio.ensure_future(self._run(task))
        return task

    def _fresh_id(self) -> str:
        while True:
            task_id = self.board.new_id(ShellTask.kind)
            if task_id not in self._tasks:
                return task_id

    def _arm_timeout(self, task: ShellTask, timeout: float | None) -> None:
        if task._timer is not None:
            task._timer.cancel()
            task._timer = None
        task.timeout = timeout
        if timeout is None or timeout <= 0:
            return
        loop = asyncio.get_running_loop()
        task._timer = loop.call_later(timeout, self._timed_out, task, timeout)

    def _timed_out(self, task: ShellTask, timeout: float) -> None:
        task._timer = None
        self.stop_soon(
            task, TaskStatus.TIMED_OUT, f"stopped at its timeout of {format_duration(timeout)}"
        )

    # -- running -------------------------------------------------------------------------

    async def _run(self, task: ShellTask) -> None:
        task._pump = asyncio.ensure_future(self._pump(task))
        code: int | None = None
        try:
            code = await self._wait_exit(task.process)
            drained = asyncio.get_running_loop().time() + DRAIN_SECONDS
            await _finished_within(task._pump, DRAIN_SECONDS)
            if task._stopper is not None:
                await asyncio.shield(task._stopper)
            elif not task.detached and await self._lingers(task, drained):
                task.leftovers = max(len(self._session_processes(task.pid)), 1)
                await asyncio.shield(self._helper(self._terminate(task)))
            if not task.sandboxed and not task.detached:
                left = await asyncio.shield(self._helper(self._stop_adopted({task.id})))
                if task._stopper is None:
                    task.leftovers += left
            if not await _finished_within(task._pump, DRAIN_SECONDS):
                # Something that left the session still holds the pipe: stop listening.
                task._pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task._pump
        except asyncio.CancelledError:
            if task._pump is not None:
                task._pump.cancel()
            raise
        finally:
            self._settle(task, code)

    async def _lingers(self, task: ShellTask, until: float) -> bool:
        """Whether processes of the command's group still run after it exited (given a
        moment to finish on their own, as a sandbox's helper does)."""
        loop = asyncio.get_running_loop()
        pump = task._pump

        def suspect() -> bool:
            # Cheap first: someone left in the group, or someone still holding the pipe.
            # Then the real check; zombies (which cannot be stopped) do not count.
            held = pump is not None and not pump.done()
            tree = self.tree
            return (
                tree is not None
                and (tree.group_alive(task.pid) or held)
                and bool(tree.session_processes(task.pid))
            )

        if task.sandboxed:
            # Nothing can linger: the shell's end ends its PID namespace, and the kernel
            # kills what is left in it (bubblewrap exits as soon as its init reports the
            # shell's end, while the init may take a few ms more to take it all down; a
            # dying namespace cannot fork). No /proc scan needed.
            return False
        while suspect():
            if loop.time() >= until:
                return True
            await asyncio.sleep(0.01)
        return False

    async def _pump(self, task: ShellTask) -> None:
        reader = task.process.stdout
        if reader is None:
            return
        limit = self.config.output_limit_bytes
        while True:
            data = await reader.read(READ_BYTES)
            if not data:
                return
            task.log.feed(data)
            if task.sinks:
                self._deliver(task, task._decode(data))
            if limit and task.log.total > limit and task._stopper is None:
                self.stop_soon(
                    task,
                    TaskStatus.FAILED,
                    f"output limit exceeded: it printed more than {format_size(limit)}, "
                    "so it was stopped",
                )

    @staticmethod
    def _deliver(task: ShellTask, text: str) -> None:
        if not text:
            return
        for sink in tuple(task.sinks):
            try:
                sink(text)
            except Exception:
                log.exception("an output sink of %s failed", task.id)

    def _settle(self, task: ShellTask, code: int | None) -> None:
        if task._timer is not None:
            task._timer.cancel()
            task._timer = None
        if code is None and task.detached:
            task.log.close()  # still running on its own; this runtime just stops following
            return
        if task.sinks:
            self._deliver(task, task._decode(b"", final=True))
        task.log.close()
        with contextlib.suppress(Exception):
            self.env.release(task.process)
        if code is not None and task.sandboxed and code > 128 and _is_signal(code - 128):
            code = 128 - code  # bubblewrap's init reports a death by signal N as 128 + N
        task.exit_code = code if code is not None and code >= 0 else None
        task.signal = -code if code is not None and code < 0 else None
        if task._stop_status is not None:
            task.status = task._stop_status
            task.reason = task._stop_reason
        elif code == 0:
            task.status = TaskStatus.COMPLETED
        elif code is None:
            task.status = TaskStatus.KILLED
            task.reason = task.reason or "the runtime stopped following it"
        else:
            task.status = TaskStatus.FAILED
        task.ended_at = time.time()
        task.ended_mono = time.monotonic()
        self._remember_session(task.pid)
        task._done.set()
        if not task.background:
            self._tasks.pop(task.id, None)
            return
        if not task.reported and not self._closing:
            self.board.ended(task, _notice(task))
        self._prune()

    def _remember_session(self, session: int) -> None:
        """A finished command's session may still hold a process that left its group
        unnoticed (`set -m; cmd &`): checked once more when the runtime closes."""
        if self.tree is None:
            return
        self._ended_sessions[session] = self.tree.process_mark()
        while len(self._ended_sessions) > MAX_ENDED_SESSIONS:
            del self._ended_sessions[next(iter(self._ended_sessions))]

    def _prune(self) -> None:
        finished = [t for t in self._tasks.values() if not t.running and t.reported]
        for task in finished[: max(len(finished) - KEEP_FINISHED, 0)]:
            del self._tasks[task.id]

    # -- moving and stopping -------------------------------------------------------------

    def move_to_background(self, task: ShellTask, timeout: float | None) -> None:
        """A foreground command keeps running as a background task (with a new timeout)."""
        if task.background:
            return
        task.sinks.clear()
        task.background = True
        self.board.post(task)
        task.log.persist()
        if task.running:
            self._arm_timeout(task, timeout)

    def stop_soon(
        self, task: ShellTask, status: TaskStatus = TaskStatus.KILLED, reason: str = "stopped"
    ) -> asyncio.Future[None]:
        """Start stopping a task (idempotent); the returned future ends when signals are
        done. Safe to call from a cancelled tool: the stopping goes on without it."""
        if task._stopper is None:
            if not task.running:
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                done.set_result(None)
                return done
            task._stop_status = status
            task._stop_reason = reason
            task._stopper = self._helper(self._terminate(task))
        return task._stopper

    async def stop(
        self, task: ShellTask, status: TaskStatus = TaskStatus.KILLED, reason: str = "stopped"
    ) -> ShellTask:
        """Stop a task (SIGTERM to its whole session, grace, SIGKILL) and wait for its end."""
        if task.running:
            await asyncio.shield(self.stop_soon(task, status, reason))
            await asyncio.shield(task._done.wait())
        return task

    async def _terminate(self, task: ShellTask) -> None:
        await self._terminate_session(task.pid, task.process, sandboxed=task.sandboxed)

    async def _terminate_session(
        self,
        session: int,
        process: Process | None = None,
        *,
        sandboxed: bool = False,
    ) -> None:
        """SIGTERM to every process of the session, the grace period, then SIGKILL.

        Sandboxed, the session leader is bubblewrap: a SIGTERM would kill it at once and,
        through --die-with-parent, everything inside with SIGKILL, leaving no grace. So
        SIGTERM goes to the others only; SIGKILL, at the end, to all of them."""
        loop = asyncio.get_running_loop()

        def gone() -> bool:
            if process is not None and process.returncode is None:
                return False
            return not self._session_processes(session)

        if sandboxed and self.tree is not None:
            for pid in self.tree.session_processes(session):
                if pid != session:
                    self.tree.signal_one(pid, signal.SIGTERM)
        else:
            self._signal_session(session, process, signal.SIGTERM)
        deadline = loop.time() + self.config.kill_grace
        while loop.time() < deadline:
            if gone():
                return
            await asyncio.sleep(POLL_SECONDS)
        self._signal_session(session, process, signal.SIGKILL)
        for _ in range(40):
            if gone():
                return
            await asyncio.sleep(POLL_SECONDS)
            self._signal_session(session, process, signal.SIGKILL)

    async def _wait_exit(self, process: Process) -> int:
        """The exit status as soon as the process exits, even while something it started
        holds its output (through the process tree when there is one)."""
        if self.tree is not None:
            return await self.tree.wait_exit(process)
        return await exit_status(process)

    def _session_processes(self, session: int) -> list[int]:
        """The living processes of a command's session (none known without a tree)."""
        return self.tree.session_processes(session) if self.tree is not None else []

    def _signal_session(self, session: int, process: Process | None, number: int) -> None:
        """Signal a command's whole session; without a process tree, the one process
        that was started (what it started itself is the environment's to stop)."""
        if self.tree is not None:
            self.tree.signal_session(session, number)
        elif process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(number)

    async def _stop_adopted(self, task_ids: set[str]) -> int:
        """Stop the orphans these tasks left that came back to us (they carry a task's
        mark), with their sessions: SIGTERM, the grace period, SIGKILL; again for those
        that came back meanwhile (the children of a stopped orphan). Returns how many."""
        tree = self.tree
        if tree is None or not self.adopting or not task_ids:
            return 0
        loop = asyncio.get_running_loop()
        running = {t.pid for t in self._tasks.values() if t.running}
        stopped = 0
        for _ in range(ADOPTED_ROUNDS):
            found = tree.marked_children(TASK_MARK)
            mine = [pid for pid, mark in found.items() if mark in task_ids and pid not in running]
            if not mine:
                break
            stopped += len(mine)
            log.info("stopping %d process(es) that left tasks %s", len(mine), sorted(task_ids))
            alive = [pid for pid in mine if tree.signal_process(pid, signal.SIGTERM)]
            deadline = loop.time() + self.config.kill_grace
            while alive and loop.time() < deadline:
                await asyncio.sleep(POLL_SECONDS)
                tree.reap_adopted()
                alive = [pid for pid in alive if tree.signal_process(pid, 0)]
            for pid in alive:
                tree.signal_process(pid, signal.SIGKILL)
            for _ in range(40):
                tree.reap_adopted()
                alive = [pid for pid in alive if tree.signal_process(pid, 0)]
                if not alive:
                    break
                await asyncio.sleep(POLL_SECONDS)
        tree.reap_adopted()
        return stopped

    def _helper(self, work: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.ensure_future(work)
        self._helpers.add(future)
        future.add_done_callback(self._helpers.discard)
        return future

    def detach(self, task: ShellTask) -> None:
        """Let a running task outlive the runtime: its output goes on into its log file
        from a small copier process, and closing the runtime leaves it alone."""
        if not task.running or task.detached:
            return
        if self.tree is None:
            raise TaskError(
                f"Task {task.id} cannot be kept running beyond the runtime: "
                f"{PROCESS_TREE_MISSING}. It keeps running until the runtime closes; stop "
                "it with TaskStop or wait for it with WaitFor."
            )
        if task._pump is not None:
            task._pump.cancel()
        task.sinks.clear()
        task.background = True
        self.board.post(task)
        task.log.persist()
        task.log.flush()
        if task._timer is not None:
            task._timer.cancel()
            task._timer = None
        remaining = max(task.log.cap_bytes - task.log.kept, 0)
        self.tree.hand_off_output(task.process, task.log.path, remaining, task.log.feed)
        task.log.close()
        task.detached = True

    # -- waiting and reporting -----------------------------------------------------------

    async def wait_any(
        self, tasks: Iterable[ShellTask], seconds: float, cancel: CancelToken | None = None
    ) -> None:
        """Return when any of the tasks ends, `cancel` fires, or `seconds` pass."""
        await self.board.wait_any(tasks, seconds, cancel)

    def get(self, task_id: str) -> ShellTask | None:
        """The background task with this id, or None."""
        task = self._tasks.get(task_id.strip())
        return task if task is not None and task.background else None

    def entries(self, *, active_only: bool = False) -> list[ShellTask]:
        """Background tasks (and foreground commands moved there), oldest first."""
        return [t for t in self._tasks.values() if t.background and (t.running or not active_only)]

    def mark_reported(self, tasks: Iterable[ShellTask]) -> None:
        """The model now knows these ended: do not announce them again."""
        self.board.mark_reported(tasks)

    def pending_notices(self) -> list[TaskEnded]:
        """The end notices of commands not given out yet (without taking them)."""
        return self.board.pending_notices(kind=ShellTask.kind)

    def take_notices(self, owner: str | None = None) -> list[TaskEnded]:
        """The notices of commands for the model's next turn (each is given out once):
        all of them, or only those of tasks `owner` (an agent id) started."""
        return self.board.take_notices(owner, kind=ShellTask.kind)

    # -- closing -------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop every task still running (unless detached) and wait until they are gone."""
        self._closing = True
        live = [t for t in list(self._tasks.values()) if t.running and not t.detached]
        for task in live:
            task.reported = True
        await asyncio.gather(
            *(self.stop(t, TaskStatus.KILLED, "the runtime closed") for t in live),
            return_exceptions=True,
        )
        runners = [t._runner for t in live if t._runner is not None]
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)
        if self._helpers:
            await asyncio.gather(*tuple(self._helpers), return_exceptions=True)
        await self._sweep()
        for task in list(self._tasks.values()):
            if task.detached and task._runner is not None:
                task._runner.cancel()
        self._tasks = {k: t for k, t in self._tasks.items() if t.detached}
        self.board.take_notices(kind=ShellTask.kind)
        for posted in self.board.entries(kind=ShellTask.kind):
            if not (isinstance(posted, ShellTask) and posted.detached):
                self.board.forget(posted.id)

    async def _sweep(self) -> None:
        """Stop what finished commands left behind outside their process group, and the
        orphans of this runtime's tasks that came back to us."""
        detached_ids = {t.id for t in self._tasks.values() if t.detached}
        await self._stop_adopted(self._started_ids - detached_ids)
        self._started_ids &= detached_ids
        detached = {t.pid for t in self._tasks.values() if t.detached}
        sessions = {s: m for s, m in self._ended_sessions.items() if s not in detached}
        self._ended_sessions.clear()
        if self.tree is None:
            return
        strays = self.tree.stray_processes(sessions)
        if strays:
            log.info("stopping processes left behind in sessions %s", sorted(strays))
            await asyncio.gather(*(self._terminate_session(s) for s in strays))


async def _finished_within(future: asyncio.Future[Any] | None, seconds: float) -> bool:
    if future is None or future.done():
        return True
    done, _ = await asyncio.wait([future], timeout=seconds)
    return bool(done)


def _short(command: str, width: int = 60) -> str:
    line = " ".join(command.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _notice(task: ShellTask) -> TaskNotice:
    log_path = task.log.path if task.log.persisted else None
    lines = [
        f"Background task {task.id} ({task.description}) ended: {task.outcome()} after "
        f"{format_duration(task.runtime_seconds())}.",
    ]
    if log_path is not None:
        lines.append(f"Its output ({format_size(task.log.total)}) is in {log_path}.")
    lines.append(f'Use TaskOutput(task_id="{task.id}") to read the end of its output.')
    return TaskNotice(
        task_id=task.id,
        kind=task.kind,
        owner=task.owner,
        status=task.status,
        description=task.description,
        message=" ".join(lines),
        exit_code=task.exit_code,
        command=task.command,
        log_path=log_path,
    )
