"""WaitFor: wait until background tasks end (any or all of them), or a timeout passes."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.output import OutputConfig
from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.output_schema import OutputSchema
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits, ToolUpdate
from deftly.features.shell.outputs import WaitForOutput
from deftly.features.shell.tasks import BackgroundTasks
from deftly.features.shell.views import render_task, task_record
from deftly.policy.rules import glob_rule_matcher
from deftly.session.tasks import BackgroundTask, format_duration

MAX_WAIT = 600
WaitStatus = Literal["completed", "timed_out", "cancelled"]
TICK_SECONDS = 1.0
MAX_PREVIEW_BYTES = 4_096


class WaitForParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_ids: list[str] | None = Field(
        None,
        max_length=50,
        description="The tasks to wait for. Omitted: every background task running now.",
    )
    timeout: int = Field(
        ge=1,
        le=MAX_WAIT,
        description="The most seconds to wait (1-600). Reaching it is not an error.",
    )
    mode: Literal["any", "all"] = Field(
        "any",
        description='"any": return as soon as one of the tasks ends (default); "all": wait '
        "until every one has ended.",
    )


class WaitForTool(Tool[WaitForParams]):
    """WaitFor: wait until background tasks end (any or all), or a timeout."""

    name = "WaitFor"
    title = "Wait for background tasks"
    description = describe("wait_for.md")
    params = WaitForParams
    traits = ToolTraits(read_only=True)
    output_schema = OutputSchema(WaitForOutput)

    def __init__(self, tasks: BackgroundTasks, output: OutputConfig) -> None:
        self.tasks = tasks
        self.output = output

    def resolve(self, args: WaitForParams) -> ToolExecution | ToolResult:
        board = self.tasks.board
        chosen: list[BackgroundTask] | None = None
        if args.task_ids is not None:
            ids = list(dict.fromkeys(i.strip() for i in args.task_ids))
            if not ids:
                return ToolResult.error(
                    "task_ids is empty: name the tasks to wait for, or leave task_ids out to "
                    "wait for every running background task."
                )
            found = {i: board.get(i) for i in ids}
            missing = [i for i, t in found.items() if t is None]
            if missing:
                known = ", ".join(t.id for t in board.entries()[-10:]) or "none"
                return ToolResult.error(
                    f"No background task has the id {', '.join(repr(m) for m in missing)} "
                    f"(known tasks: {known}). TaskList shows the ids."
                )
            chosen = [t for t in found.values() if t is not None]
        subject = " ".join(t.id for t in chosen) if chosen else "any"
        target = f"{args.mode} of {len(chosen)} task(s)" if chosen else "background tasks"
        return ToolExecution(
            execute=lambda ctx: self._wait(ctx, chosen, args),
            approval_rule=self.name,
            matches_rule=glob_rule_matcher(subject),
            accesses=Accesses.read_tree(self.tasks.log_dir),  # only this session's tasks
            display=GenericDisplay(summary=f"Wait up to {args.timeout} s for {target}"),
            description=f"Waiting up to {args.timeout}s for {target}",
        )

    async def _wait(
        self, ctx: ToolContext, chosen: list[BackgroundTask] | None, args: WaitForParams
    ) -> ToolResult:
        board = self.tasks.board
        tasks = chosen if chosen is not None else board.entries(active_only=True)
        if not tasks:
            return ToolResult.ok(
                "wait_status: no_tasks\nNo background tasks are running, so there is nothing "
                "to wait for. Finished tasks are announced to you automatically.",
                structured=WaitForOutput(
                    status="no_tasks", waited_seconds=0.0, ended=[], still_running=[]
                ),
            )
        start = time.monotonic()
        deadline = start + args.timeout
        status: WaitStatus
        while True:
            ended = [t for t in tasks if not t.running]
            if (ended and args.mode == "any") or len(ended) == len(tasks):
                status = "completed"
                break
            now = time.monotonic()
            if ctx.cancelled:
                status = "cancelled"
                break
            if now >= deadline:
                status = "timed_out"
                break
            waiting = [t for t in tasks if t.running]
            ctx.report(
                ToolUpdate(
                    "status",
                    text=f"Waiting {format_duration(now - start)} / "
                    f"{format_duration(args.timeout)} · {len(waiting)} task(s) still running",
                )
            )
            await board.wait_any(waiting, min(TICK_SECONDS, deadline - now), ctx.cancel)
        return self._report(tasks, status, time.monotonic() - start, args.timeout)

    def _report(
        self, tasks: list[BackgroundTask], status: WaitStatus, waited: float, timeout: int
    ) -> ToolResult:
        ended = [t for t in tasks if not t.running]
        running = [t for t in tasks if t.running]
        lines = [
            f"wait_status: {status}",
            f"waited: {format_duration(waited)} (timeout {format_duration(timeout)})",
        ]
        if status == "timed_out":
            lines.append(
                "The wait ended before the tasks did; that is not an error. Call WaitFor again "
                "to keep waiting, or carry on: endings are announced to you automatically."
            )
        budget = max(self.output.max_chars // 2, 2_000)
        per_task = min(MAX_PREVIEW_BYTES, budget // max(len(ended), 1))
        sections = ["\n".join(lines)]
        if ended:
            records = "\n---\n".join(render_task(t, preview_bytes=per_task) for t in ended)
            sections.append(f"[ended: {len(ended)}]\n{records}")
        if running:
            records = "\n---\n".join(render_task(t) for t in running)
            sections.append(f"[still_running: {len(running)}]\n{records}")
        self.tasks.board.mark_reported(ended)
        structured = WaitForOutput(
            status=status,
            waited_seconds=round(waited, 3),
            ended=[task_record(t) for t in ended],
            still_running=[task_record(t) for t in running],
        )
        return ToolResult.ok("\n\n".join(sections), structured=structured)
