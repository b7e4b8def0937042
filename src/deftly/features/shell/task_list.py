"""TaskList: the background tasks of this session (every kind: commands, sub-agents,
questions), and those that ended unannounced."""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.output_schema import OutputSchema
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.shell.outputs import TaskListOutput
from deftly.features.shell.tasks import BackgroundTasks
from deftly.features.shell.views import render_task, task_record
from deftly.policy.rules import glob_rule_matcher


class TaskListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    active_only: bool = Field(
        True,
        description="List only running tasks (default). False lists finished ones too.",
    )


class TaskListTool(Tool[TaskListParams]):
    """TaskList: the session's background tasks and how each is doing."""

    name = "TaskList"
    title = "List background tasks"
    description = describe("task_list.md")
    params = TaskListParams
    traits = ToolTraits(read_only=True, idempotent=True)
    output_schema = OutputSchema(TaskListOutput)

    def __init__(self, tasks: BackgroundTasks) -> None:
        self.tasks = tasks

    def resolve(self, args: TaskListParams) -> ToolExecution:
        scope = "active" if args.active_only else "all"
        return ToolExecution(
            execute=lambda ctx: self._list(ctx, args.active_only),
            approval_rule=self.name,
            matches_rule=glob_rule_matcher(scope),
            accesses=Accesses.read_tree(self.tasks.log_dir),  # only this session's tasks
            display=GenericDisplay(summary=f"List {scope} background tasks"),
            description="Listing background tasks",
        )

    def _list(self, ctx: ToolContext, active_only: bool) -> ToolResult:
        now = time.monotonic()
        board = self.tasks.board
        shown = board.entries(active_only=active_only)
        unannounced = [
            t for t in board.entries() if not t.running and not t.reported and t not in shown
        ]
        running = sum(1 for t in shown if t.running)
        if shown:
            head = f"background_tasks: {len(shown)} ({running} running)"
        elif active_only:
            head = "background_tasks: none running"
        else:
            head = "background_tasks: none in this session"
        sections = [head]
        if shown:
            sections.append("\n---\n".join(render_task(t, now=now) for t in shown))
        if unannounced:
            records = "\n---\n".join(render_task(t, now=now) for t in unannounced)
            sections.append(
                "[ended since you last heard: you will not be notified about these again]\n"
                + records
            )
        board.mark_reported([*shown, *unannounced])
        structured = TaskListOutput(
            tasks=[task_record(t, now=now) for t in shown],
            running=running,
            ended_unannounced=[task_record(t, now=now) for t in unannounced],
        )
        return ToolResult.ok("\n\n".join(sections), structured=structured)
