"""TaskStop: stop a background task and every process it started."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.shell import ShellConfig
from deftly.contract.describe import describe
from deftly.contract.display import TaskStopDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.shell.task_output import unknown_task
from deftly.features.shell.tasks import BackgroundTasks
from deftly.features.shell.views import render_task
from deftly.policy.rules import glob_rule_matcher
from deftly.session.tasks import BackgroundTask

PREVIEW_BYTES = 2_048


class TaskStopParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The task's id, e.g. bash-1a2b3c4d (from Bash or TaskList).")


class TaskStopTool(Tool[TaskStopParams]):
    """TaskStop: stop a background task (its whole process group)."""

    name = "TaskStop"
    title = "Stop a background task"
    description = describe("task_stop.md")
    params = TaskStopParams
    traits = ToolTraits(destructive=True, idempotent=True, stops_tasks=True)

    def __init__(self, tasks: BackgroundTasks, config: ShellConfig) -> None:
        self.tasks = tasks
        self.config = config

    def description_vars(self) -> dict[str, object]:
        return {"KILL_GRACE": f"{self.config.kill_grace:g}"}

    def resolve(self, args: TaskStopParams) -> ToolExecution | ToolResult:
        task = self.tasks.board.get(args.task_id)
        if task is None:
            return unknown_task(self.tasks, args.task_id)
        return ToolExecution(
            execute=lambda ctx: self._stop(ctx, task),
            approval_rule=self.name,
            matches_rule=glob_rule_matcher(task.id),
            accesses=None,
            display=TaskStopDisplay(task_id=task.id, task_description=task.description),
            description=f"Stopping task {task.id}",
        )

    async def _stop(self, ctx: ToolContext, task: BackgroundTask) -> ToolResult:
        board = self.tasks.board
        if not task.running:
            board.mark_reported([task])
            text = render_task(task, preview_bytes=PREVIEW_BYTES)
            return ToolResult.ok(f"Task {task.id} had already ended; nothing was stopped.\n{text}")
        task.reported = True  # the answer below tells the model; no notice after it
        await task.stop("stopped by TaskStop")
        board.mark_reported([task])
        text = render_task(task, preview_bytes=PREVIEW_BYTES)
        return ToolResult.ok(f"Stopped task {task.id}.\n{text}")
