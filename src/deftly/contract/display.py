"""How a call is shown to a person: the 13 display kinds.

A display travels on the "call started" event and on approval requests, so a UI renders a
diff or a command instead of a blob of JSON. It is never sent to the model.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field


class _Display(BaseModel):
    # defer_build: the validators are built on the first display made, not at import (a
    # start-up that only lists tools makes none).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class CommandDisplay(_Display):
    """A shell command about to run, where, and what it is for (the model's own description)."""

    kind: Literal["command"] = "command"
    command: str
    cwd: str | None = None
    description: str | None = None
    language: Literal["bash"] | None = "bash"


class FileIODisplay(_Display):
    """A file operation on one path (read, write, edit, glob, grep), with what is read or written
    where it helps."""

    kind: Literal["file_io"] = "file_io"
    operation: Literal["read", "write", "edit", "glob", "grep"]
    path: str
    detail: str | None = None
    content: str | None = None
    before: str | None = None
    after: str | None = None


class DiffDisplay(_Display):
    """A whole file before and after a change (shown as a unified diff with context)."""

    kind: Literal["diff"] = "diff"
    path: str
    before: str
    after: str
    hunks: int | None = None
    new_file: bool = False


class SearchDisplay(_Display):
    """A search: what is looked for, and where."""

    kind: Literal["search"] = "search"
    query: str
    scope: str | None = None


class UrlFetchDisplay(_Display):
    """A web request: the URL and the method."""

    kind: Literal["url_fetch"] = "url_fetch"
    url: str
    method: str | None = None


class AgentCallDisplay(_Display):
    """A sub-agent being started: its name, its prompt, and whether it runs in the background."""

    kind: Literal["agent_call"] = "agent_call"
    agent_name: str
    prompt: str
    background: bool | None = None


class SkillCallDisplay(_Display):
    """A skill being loaded, with the arguments it was given."""

    kind: Literal["skill_call"] = "skill_call"
    skill_name: str
    args: str | None = None


class TodoItem(_Display):
    """One entry of a todo list: what to do, and how far it is."""

    title: str
    status: str


class TodoListDisplay(_Display):
    """The whole todo list after a change."""

    kind: Literal["todo_list"] = "todo_list"
    items: list[TodoItem]


class TaskDisplay(_Display):
    """A background task: its id, its state and what it runs."""

    kind: Literal["task"] = "task"
    task_id: str
    status: str
    description: str
    task_kind: str | None = None


class TaskStopDisplay(_Display):
    """A background task about to be stopped."""

    kind: Literal["task_stop"] = "task_stop"
    task_id: str
    task_description: str


class PlanOption(_Display):
    """One choice offered when a plan is reviewed."""

    label: str
    description: str


class PlanReviewDisplay(_Display):
    """A plan put to a person for review, with the choices they have."""

    kind: Literal["plan_review"] = "plan_review"
    plan: str
    path: str | None = None
    options: list[PlanOption] | None = None


class GoalStartDisplay(_Display):
    """A goal being started: the objective, how to tell it is done, and the mode it runs in."""

    kind: Literal["goal_start"] = "goal_start"
    objective: str
    completion_criterion: str | None = None
    mode: Literal["manual", "yolo"] = "manual"


class GenericDisplay(_Display):
    """Any other call: a one-line summary, with optional structured detail."""

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


CONTEXT_LINES = 3
MAX_DIFF_CHANGED_LINES = 2_000
"""Past this many changed lines a diff is not shown, only how big it is."""
MAX_DIFF_INPUT_LINES = 100_000
"""Past this many lines (before and after together) no line-by-line diff is worked out: the
number of changed lines is counted from the lines each side has that the other lacks."""


def unified_diff(path: str, before: str, after: str, *, new_file: bool = False) -> str:
    """A before/after pair as a unified diff, the way people read changes: hunk headers
    with the real line numbers and three lines of context. `path` as it should be shown
    (relative to the workspace when inside it). Huge changes say only how big they are."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    shown = path
    head = [
        "--- /dev/null\n" if new_file else f"--- {_side('a', shown)}\n",
        f"+++ {_side('b', shown)}\n",
    ]
    if len(old) + len(new) > MAX_DIFF_INPUT_LINES:
        return (
            "".join(head) + f"(diff too large: about {_rough_changes(old, new):,} lines changed)\n"
        )
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    changed = sum(
        (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )
    if not changed:
        return ""
    if changed > MAX_DIFF_CHANGED_LINES:
        return "".join(head) + f"(diff too large: {changed:,} lines changed)\n"
    out = head
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in old[i1:i2]]
                continue
            out += ["-" + line for line in old[i1:i2]]
            out += ["+" + line for line in new[j1:j2]]
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def replacement_text(path: str, old: str, new: str) -> str:
    """An edit's old and new text when the file itself is not at hand (no line numbers
    can be given): the lines taken out, then the lines put in."""
    lines = [f"{path}: replace\n"]
    lines += ["-" + line for line in old.splitlines(keepends=True)]
    lines += ["+" + line for line in new.splitlines(keepends=True)]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _side(prefix: str, path: str) -> str:
    return path if path.startswith("/") else f"{prefix}/{path}"


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (`10,7`; `10` for one line; `9,0` empty)."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _rough_changes(old: list[str], new: list[str]) -> int:
    left, right = Counter(old), Counter(new)
    return sum((left - right).values()) + sum((right - left).values())
