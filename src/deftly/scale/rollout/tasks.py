"""The task file: one JSON object a line, `{id, repo, ref?, prompt, setup?, mode?,
max_steps?, model?}`; a bad line is reported with its number and the others still run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class Task(BaseModel):
    """One rollout task: a prompt for an agent in a fresh workspace of `repo` at `ref`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    repo: str = Field(
        min_length=1, description="A local path (relative: to the tasks file) or a git URL."
    )
    ref: str | None = None
    prompt: str = Field(min_length=1)
    setup: str | None = None
    mode: Literal["manual", "yolo", "auto"] | None = None
    max_steps: int | None = Field(None, ge=0)
    model: str | None = None

    @field_validator("id", "prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


@dataclass(frozen=True)
class TaskProblem:
    """A line of the tasks file that is not a task, and why."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def is_url(repo: str) -> bool:
    """Whether `repo` names a remote git repository rather than a local path."""
    return "://" in repo or (":" in repo.split("/", 1)[0] and not Path(repo).exists())


def load_tasks(path: Path) -> tuple[list[Task], list[TaskProblem]]:
    """The tasks of `path` (local repos made absolute against its folder) and the problems
    of the lines that are not tasks (blank lines are skipped; a repeated id is a problem)."""
    tasks: list[Task] = []
    problems: list[TaskProblem] = []
    seen: set[str] = set()
    base = path.resolve().parent
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            task = parse_task(line, base)
        except ValueError as exc:
            problems.append(TaskProblem(number, str(exc)))
            continue
        if task.id in seen:
            problems.append(
                TaskProblem(
                    number,
                    f"the id {task.id!r} is used by an earlier line; give each task its own id",
                )
            )
            continue
        seen.add(task.id)
        tasks.append(task)
    return tasks, problems


def parse_task(line: str, base: Path) -> Task:
    """One task line; ValueError with a readable reason when it is not one."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not JSON ({exc.msg} at column {exc.colno}); write one JSON object a line"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(  # noqa: TRY004 (the line's problem, reported like the others)
            'not a JSON object; write {"id": ..., "repo": ..., "prompt": ...}'
        )
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        raise ValueError(_explain(exc)) from None
    if not is_url(task.repo):
        task = task.model_copy(
            update={"repo": str((base / Path(task.repo).expanduser()).resolve())}
        )
    return task


def _explain(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "the line"
        if error["type"] == "missing":
            parts.append(f"{field} is missing")
        elif error["type"] == "extra_forbidden":
            known = ", ".join(Task.model_fields)
            parts.append(f"{field} is not a task field (they are: {known})")
        else:
            parts.append(f"{field}: {error['msg']}")
    return "; ".join(parts)
