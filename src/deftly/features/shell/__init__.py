"""Shell tools: Bash and the background-task tools (TaskList, TaskOutput, TaskStop, WaitFor).

They share one `BackgroundTasks` manager, which the runtime builds (see
`Runtime._wire_shell`) and hands to each tool's constructor.
"""

from __future__ import annotations

from deftly.env.base import PROCESS
from deftly.features.shell.bash import BashTool
from deftly.features.shell.task_list import TaskListTool
from deftly.features.shell.task_output import TaskOutputTool
from deftly.features.shell.task_stop import TaskStopTool
from deftly.features.shell.tasks import BackgroundTasks, ShellTask, TaskNotice
from deftly.features.shell.wait_for import WaitForTool
from deftly.registry.contribution import ToolContribution
from deftly.session.tasks import TaskStatus

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(BashTool, requires={PROCESS}),
    ToolContribution.of(TaskListTool, requires={PROCESS}),
    ToolContribution.of(TaskOutputTool, requires={PROCESS}),
    ToolContribution.of(TaskStopTool, requires={PROCESS}),
    ToolContribution.of(WaitForTool, requires={PROCESS}),
]

__all__ = [
    "CONTRIBUTIONS",
    "BackgroundTasks",
    "BashTool",
    "ShellTask",
    "TaskListTool",
    "TaskNotice",
    "TaskOutputTool",
    "TaskStatus",
    "TaskStopTool",
    "WaitForTool",
]
