"""One task, run the way `deftly run` runs a prompt: a fresh workspace, its own session
and runtime, the mode, step limit and model the task (else the command line, else the
config) asks for, one agent turn; then the diff and the transcript.

`execute(payload)` is what a worker calls (a pool process, a Ray task): plain data in,
plain data out, never an exception for anything that went wrong with the task itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from deftly.contract.stack import with_stack_room
from deftly.scale.rollout.tasks import Task
from deftly.scale.rollout.workspace import WorkspaceError, clone, run_setup


@dataclass(frozen=True)
class RunOptions:
    """The run options of the command line that apply to every task (a task's own
    `mode`, `max_steps` and `model` win). Plain data: it travels to the workers."""

    mode: str | None = None
    yes: bool = False
    trust: bool = False
    max_steps: int | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    mcp_config: tuple[str, ...] = ()
    timeout: float | None = None
    setup_timeout: float | None = 600.0
    scratch: str | None = None
    """Where workspaces are made (None: the worker's temp directory)."""
    keep: bool = False
    """Keep each workspace (for debugging) instead of removing it."""

    def to_json(self) -> dict[str, Any]:
        """Plain data for a payload."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOptions:
        """The options a payload carries."""
        return cls(**{**data, "mcp_config": tuple(data.get("mcp_config") or ())})


@dataclass
class Outcome:
    """What one task produced (before the driver adds `attempts` and places the transcript)."""

    id: str
    status: str = "failed"
    stop_reason: str = "internal"
    text: str = ""
    diff: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    seconds: float = 0.0
    transcript: str | None = None
    error: str | None = None


def payload(task: Task, options: RunOptions) -> dict[str, Any]:
    """What a worker gets for `task` (no secrets: keys stay in the workers' environments)."""
    return {"task": task.model_dump(), "options": options.to_json()}


def execute(data: dict[str, Any]) -> dict[str, Any]:
    """Run one task from its payload to its outcome (a worker's entry point). SIGTERM
    cancels it cleanly (the runtime stops what it started) when it runs in a main thread."""
    task = Task.model_validate(data["task"])
    options = RunOptions.from_json(data["options"])
    return asdict(with_stack_room(asyncio.run, _cancellable(run_task(task, options))))


async def _cancellable(work: Any) -> Outcome:
    job = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, job.cancel)
    try:
        result: Outcome = await job
        return result
    finally:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.remove_signal_handler(signal.SIGTERM)


async def run_task(task: Task, options: RunOptions) -> Outcome:
    """Run `task` to its outcome (see the module docstring)."""
    began = time.monotonic()
    outcome = Outcome(task.id)
    root = Path(tempfile.mkdtemp(prefix="deftly-rollout-", dir=options.scratch))
    try:
        try:
            workspace = await asyncio.to_thread(clone, task.repo, task.ref, root / "ws")
            if task.setup:
                await run_setup(task.setup, workspace.path, options.setup_timeout)
        except WorkspaceError as exc:
            outcome.stop_reason, outcome.error = exc.stage, str(exc)
            return outcome
        try:
            await _turn(task, options, workspace.path, root / "home", outcome)
        finally:
            with contextlib.suppress(WorkspaceError):
                outcome.diff = await asyncio.to_thread(workspace.diff)
        return outcome
    except Exception as exc:  # the task fails; the rollout goes on
        outcome.status, outcome.stop_reason = "failed", "internal"
        outcome.error = f"the task failed unexpectedly: {type(exc).__name__}: {exc}"
        return outcome
    finally:
        outcome.seconds = round(time.monotonic() - began, 3)
        if not options.keep:
            await asyncio.to_thread(shutil.rmtree, root, True)


async def _turn(
    task: Task, options: RunOptions, workspace: Path, home: Path, outcome: Outcome
) -> None:
    """The agent's turn in `workspace`, its session under `home`; fills `outcome`."""
    from deftly.agent import Agent
    from deftly.agent.models import ModelError, make_provider, resolve_model
    from deftly.agent.transcript import transcript_path
    from deftly.contract.tool import CancelToken
    from deftly.runtime import Runtime
    from deftly.scale.ray_children import children_backend

    runtime = Runtime(
        workspace,
        mode=task.mode or options.mode,
        approve_asks=options.yes,
        trust=True if options.trust else None,
        home=home,
    )
    for config_file in options.mcp_config:
        runtime.add_mcp_config(Path(config_file))
    try:
        settings = resolve_model(
            runtime.config,
            task.model or options.model,
            provider=options.provider,
            base_url=options.base_url,
        )
        provider = make_provider(settings)
    except ModelError as exc:
        outcome.stop_reason, outcome.error = "model", str(exc)
        return
    max_steps = task.max_steps if task.max_steps is not None else options.max_steps
    token = CancelToken()
    timed_out = False

    def time_up() -> None:
        nonlocal timed_out
        timed_out = True
        token.cancel(f"the task ran past its {options.timeout:g} s time limit", by_user=False)

    async with runtime:
        agent = Agent(
            runtime,
            provider,
            max_steps=max_steps,
            context_window=settings.context_window,
            children_backend=children_backend(runtime.config.agents),  # as `deftly run` does
        )
        async with agent:
            timer = (
                asyncio.get_running_loop().call_later(options.timeout, time_up)
                if options.timeout
                else None
            )
            try:
                result = await agent.run(task.prompt, cancel=token)
            finally:
                if timer is not None:
                    timer.cancel()
        path = transcript_path(runtime.session_dir, agent.agent_id)
        outcome.transcript = path.read_text(encoding="utf-8") if path.exists() else None
    outcome.text, outcome.steps = result.text, result.steps
    outcome.usage = result.total_usage.to_json()
    if timed_out:
        outcome.status, outcome.stop_reason = "timeout", "timeout"
        outcome.error = (
            f"the task ran past its {options.timeout:g} s time limit (--timeout) and its turn "
            "was stopped; the diff holds what it changed so far"
        )
    elif result.stop_reason in ("error", "cancelled"):
        outcome.stop_reason = result.stop_reason
        outcome.error = result.error or "the turn was cancelled"
    else:
        outcome.status, outcome.stop_reason = "ok", result.stop_reason
