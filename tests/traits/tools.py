"""New tools that no guard knows by name: each declares only its traits.

If a guard still decided by names, these would slip through it; the trait tests show each
is treated exactly like the built-in tool with the same traits.
"""

from __future__ import annotations

from deftly.contract.accesses import Accesses
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolExecution, ToolTraits
from tests.helpers import EchoParams, WriteTool


class JotTool(WriteTool):
    """Writes a whole file, like Write, under a name no guard has heard of."""

    name = "Jot"
    description = "Write a text file (a new file-writing tool)."
    traits = ToolTraits(writes_files=True)


class _Declared(Tool[EchoParams]):
    """A do-nothing tool that declares no accesses: it touches nothing."""

    params = EchoParams

    def resolve(self, args: EchoParams) -> ToolExecution:
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            execute=lambda ctx: ToolResult.ok(f"{self.name} ran with {args.text}"),
        )


class HaltTool(_Declared):
    """Stops background tasks, as TaskStop does."""

    name = "Halt"
    description = "Stop a background task (a new task-stopping tool)."
    traits = ToolTraits(destructive=True, stops_tasks=True)


class PeekTaskTool(_Declared):
    """Shows a background task's output, as TaskOutput does."""

    name = "PeekTask"
    description = "Show a background task's output (a new task-reading tool)."
    traits = ToolTraits(read_only=True, reads_task_output=True)


class RemindLaterTool(_Declared):
    """Schedules a prompt for later, as a cron tool would."""

    name = "RemindLater"
    description = "Schedule a prompt for later (a new scheduling tool)."
    traits = ToolTraits(schedules_work=True)


class ToolShelfTool(_Declared):
    """A tool about the tool list, as select_tools is."""

    name = "ToolShelf"
    description = "Load tool definitions (a new disclosure tool)."
    traits = ToolTraits(read_only=True, discloses_tools=True)


class ShapelessTool(_Declared):
    """A tool whose traits cannot be read (set to None by a careless plugin)."""

    name = "Shapeless"
    description = "A tool that declares no readable traits."
    traits = None  # type: ignore[assignment]
