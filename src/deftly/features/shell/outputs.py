"""The shapes of the task tools' structured results (`ToolResult.structured`).

Each TypedDict is what the tool builds (a plain dict) and, through `OutputSchema`, its
`output_schema`. A task of any kind has one record; fields only a command has (its
command line, exit code, signal, log) are null for the others.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict


class TaskRecord(TypedDict):
    """One background task, whatever its kind."""

    id: Annotated[str, Field(description='Its id, e.g. "bash-1a2b3c4d".')]
    kind: Annotated[str, Field(description='"bash", "agent", "question", ...')]
    status: Literal["running", "completed", "failed", "killed", "timed_out"]
    outcome: Annotated[str, Field(description='How it ended in words ("failed (exit code 2)").')]
    description: str
    command: Annotated[str | None, Field(description="The command line (commands only).")]
    started_at: Annotated[str, Field(description="When it started (local ISO time).")]
    ended_at: Annotated[str | None, Field(description="When it ended; null while it runs.")]
    seconds: Annotated[float, Field(description="How long it ran (so far, while it runs).")]
    exit_code: Annotated[int | None, Field(description="A command's exit code, once it ended.")]
    signal: Annotated[str | None, Field(description="The signal that ended a command.")]
    output_bytes: Annotated[int, Field(description="How much output it produced in all.")]
    output_path: Annotated[
        str | None, Field(description="Where its whole output is kept (read it with Read).")
    ]


class TaskListOutput(TypedDict):
    """The session's background tasks."""

    tasks: Annotated[list[TaskRecord], Field(description="The tasks listed.")]
    running: Annotated[int, Field(description="How many of them are running.")]
    ended_unannounced: Annotated[
        list[TaskRecord],
        Field(description="Tasks that ended since the model last heard (told once, here)."),
    ]


class TaskOutputOutput(TypedDict):
    """One task and its newest output."""

    task: TaskRecord
    output: Annotated[str, Field(description="Its newest output (the end, when long).")]
    truncated: Annotated[bool, Field(description="`output` is only the end of it.")]
    still_running: Annotated[
        bool, Field(description="With block: the wait ended and the task still runs.")
    ]


class WaitForOutput(TypedDict):
    """How a wait ended: which tasks finished, which still run."""

    status: Literal["completed", "timed_out", "cancelled", "no_tasks"]
    waited_seconds: float
    ended: Annotated[list[TaskRecord], Field(description="Tasks that have ended.")]
    still_running: Annotated[list[TaskRecord], Field(description="Tasks still running.")]
