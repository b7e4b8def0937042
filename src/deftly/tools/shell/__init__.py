"""Shell tools: Bash and the background-task tools (TaskList, TaskOutput, TaskStop, WaitFor).

They share one `BackgroundTasks` manager, which the runtime builds (see
`Runtime._wire_shell`) and hands to each tool's constructor.
"""

from __future__ import annotations

from deftly.env.base import PROCESS
from deftly.registry.contribution import ToolContribution
from deftly.tools.shell.bash import BashTool
from deftly.tools.shell.task_list import TaskListTool
from deftly.tools.shell.task_output import TaskOutputTool
from deftly.tools.shell.task_stop import TaskStopTool
from deftly.tools.shell.tasks import BackgroundTasks, ShellTask, TaskNotice, TaskStatus
from deftly.tools.shell.wait_for import WaitForTool

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
