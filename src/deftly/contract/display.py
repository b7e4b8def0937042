"""How a call is shown to a person: the 13 display kinds.

A display travels on the "call started" event and on approval requests, so a UI renders a
diff or a command instead of a blob of JSON. It is never sent to the model.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field


class _Display(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CommandDisplay(_Display):
    kind: Literal["command"] = "command"
    command: str
    cwd: str | None = None
    description: str | None = None
    language: Literal["bash"] | None = "bash"


class FileIODisplay(_Display):
    kind: Literal["file_io"] = "file_io"
    operation: Literal["read", "write", "edit", "glob", "grep"]
    path: str
    detail: str | None = None
    content: str | None = None
    before: str | None = None
    after: str | None = None


class DiffDisplay(_Display):
    kind: Literal["diff"] = "diff"
    path: str
    before: str
    after: str
    hunks: int | None = None


class SearchDisplay(_Display):
    kind: Literal["search"] = "search"
    query: str
    scope: str | None = None


class UrlFetchDisplay(_Display):
    kind: Literal["url_fetch"] = "url_fetch"
    url: str
    method: str | None = None


class AgentCallDisplay(_Display):
    kind: Literal["agent_call"] = "agent_call"
    agent_name: str
    prompt: str
    background: bool | None = None


class SkillCallDisplay(_Display):
    kind: Literal["skill_call"] = "skill_call"
    skill_name: str
    args: str | None = None


class TodoItem(_Display):
    title: str
    status: str


class TodoListDisplay(_Display):
    kind: Literal["todo_list"] = "todo_list"
    items: list[TodoItem]


class TaskDisplay(_Display):
    kind: Literal["task"] = "task"
    task_id: str
    status: str
    description: str
    task_kind: str | None = None


class TaskStopDisplay(_Display):
    kind: Literal["task_stop"] = "task_stop"
    task_id: str
    task_description: str


class PlanOption(_Display):
    label: str
    description: str


class PlanReviewDisplay(_Display):
    kind: Literal["plan_review"] = "plan_review"
    plan: str
    path: str | None = None
    options: list[PlanOption] | None = None


class GoalStartDisplay(_Display):
    kind: Literal["goal_start"] = "goal_start"
    objective: str
    completion_criterion: str | None = None
    mode: Literal["manual", "yolo"] = "manual"


class GenericDisplay(_Display):
    kind: Literal["generic"] = "generic"
    summary: str
    detail: Any = None


Display: TypeAlias = Annotated[
    CommandDisplay
    | FileIODisplay
    | DiffDisplay
    | SearchDisplay
    | UrlFetchDisplay
    | AgentCallDisplay
    | SkillCallDisplay
    | TodoListDisplay
    | TaskDisplay
    | TaskStopDisplay
    | PlanReviewDisplay
    | GoalStartDisplay
    | GenericDisplay,
    Field(discriminator="kind"),
]

DISPLAY_KINDS: tuple[str, ...] = (
    "command",
    "file_io",
    "diff",
    "search",
    "url_fetch",
    "agent_call",
    "skill_call",
    "todo_list",
    "task",
    "task_stop",
    "plan_review",
    "goal_start",
    "generic",
)


def unified_diff(path: str, before: str, after: str) -> str:
    """A before/after pair as a unified diff, the way people read changes."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}",
        tofile=f"b/{path.lstrip('/')}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
