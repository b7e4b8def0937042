"""TaskOutput: a background task's status and its newest output (optionally waiting)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.shell import ShellConfig
from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import TaskDisplay
from deftly.contract.output_schema import OutputSchema
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.shell.outputs import TaskOutputOutput
from deftly.features.shell.tasks import BackgroundTasks
from deftly.features.shell.views import newest_output, render_task, task_record
from deftly.policy.rules import glob_rule_matcher
from deftly.session.tasks import BackgroundTask, format_duration

MAX_WAIT = 600


class TaskOutputParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The task's id, e.g. bash-1a2b3c4d (from Bash or TaskList).")
    block: bool = Field(
        False,
        description="Wait for the task to end (up to `timeout`) before answering. Usually "
        "unnecessary: you are notified when a task ends.",
    )
    timeout: int = Field(
        30,
        ge=1,
        le=MAX_WAIT,
        description="With block: the most seconds to wait (1-600).",
    )


def unknown_task(tasks: BackgroundTasks, task_id: str) -> ToolResult:
    """The error for a task id that is not a background task of this session."""
    known = ", ".join(t.id for t in tasks.board.entries()[-10:])
    hint = f" Known tasks: {known}." if known else " There are no background tasks in this session."
    return ToolResult.error(
        f'No background task has the id "{task_id}".{hint} TaskList shows the ids.'
    )


class TaskOutputTool(Tool[TaskOutputParams]):
    """TaskOutput: the end of a background task's output, and how it is doing."""

    name = "TaskOutput"
    title = "Read a task's output"
    description = describe("task_output.md")
    params = TaskOutputParams
    traits = ToolTraits(read_only=True, reads_task_output=True)
    output_schema = OutputSchema(TaskOutputOutput)

    def __init__(self, tasks: BackgroundTasks, config: ShellConfig) -> None:
        self.tasks = tasks
        self.config = config

    def description_vars(self) -> dict[str, object]:
        return {"PREVIEW_KIB": self.config.preview_bytes // 1024}

    def resolve(self, args: TaskOutputParams) -> ToolExecution | ToolResult:
        task = self.tasks.board.get(args.task_id)
        if task is None:
            return unknown_task(self.tasks, args.task_id)
        return ToolExecution(
            execute=lambda ctx: self._read(ctx, task, args),
            approval_rule=self.name,
            matches_rule=glob_rule_matcher(task.id),
            accesses=Accesses.read_tree(self.tasks.log_dir),  # this session's own task
            display=TaskDisplay(
                task_id=task.id,
                status=task.status.value,
                description=task.description,
                task_kind=task.kind,
            ),
            description=f"Reading output of task {task.id}",
        )

    async def _read(
        self, ctx: ToolContext, task: BackgroundTask, args: TaskOutputParams
    ) -> ToolResult:
        note = ""
        if args.block and task.running:
            await self.tasks.board.wait_any([task], args.timeout, ctx.cancel)
            if task.running:
                note = (
                    f"\n\nwait: still running after {format_duration(args.timeout)} (not an "
                    "error). Carry on with other work; you will be notified when it ends."
                )
        text = render_task(task, preview_bytes=self.config.preview_bytes)
        output, cut = newest_output(task, self.config.preview_bytes)
        structured = TaskOutputOutput(
            task=task_record(task),
            output=output,
            truncated=cut,
            still_running=bool(note),
        )
        self.tasks.board.mark_reported([task])
        return ToolResult.ok(text + note, structured=structured)
