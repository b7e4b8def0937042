"""How a task is shown to the model (TaskList, TaskOutput, TaskStop, WaitFor).

A command gets its full record (command, exit code, log); a task of another kind (a
sub-agent, a question) its kind, description, outcome and newest output.
"""

from __future__ import annotations

import time

from deftly.features.shell.format import format_size, local_time, record
from deftly.features.shell.output import decode_tail
from deftly.features.shell.outputs import TaskRecord
from deftly.features.shell.tasks import ShellTask, signal_name
from deftly.session.tasks import BackgroundTask, TaskStatus, format_duration, ran_for


def task_fields(task: ShellTask, *, now: float | None = None) -> list[tuple[str, object]]:
    """A task as name/value pairs for a tool's output (id, status, times, command)."""
    now = time.monotonic() if now is None else now
    fields: list[tuple[str, object]] = [
        ("task_id", task.id),
        ("status", task.status.value),
    ]
    if task.status is not TaskStatus.RUNNING:
        fields.append(("exit_code", task.exit_code))
        if task.signal is not None:
            fields.append(("signal", signal_name(task.signal)))
        fields.append(("reason", task.reason))
    fields += [
        ("command", task.command),
        ("description", task.description if task.description != task.command else None),
        ("started_at", local_time(task.started_at)),
    ]
    if task.running:
        fields.append(("running_for", format_duration(task.age_seconds(now))))
        if task.stopping:
            fields.append(("note", "being stopped"))
    else:
        fields.append(("ran_for", format_duration(task.runtime_seconds(now))))
    if task.detached:
        fields.append(("detached", "yes (outlives the runtime; output goes straight to the log)"))
    return fields


def output_fields(task: ShellTask) -> list[tuple[str, object]]:
    """What a task printed, as name/value pairs (size, log path)."""
    out = task.log
    fields: list[tuple[str, object]] = [("output_size", f"{format_size(out.total)}")]
    if out.persisted:
        fields.append(("log_path", out.path))
        if not out.complete:
            fields.append(
                (
                    "log_holds",
                    f"the first {format_size(out.kept)} (the log limit); the rest was not kept",
                )
            )
    elif out.error:
        fields.append(("log_error", out.error))
    return fields


def preview(task: ShellTask, limit: int) -> tuple[str, bool]:
    """The newest output, at most `limit` bytes; and whether that is less than all of it."""
    data = task.log.tail(limit)
    return decode_tail(data), len(data) < task.log.total


def render_task(
    task: BackgroundTask,
    *,
    preview_bytes: int = 0,
    now: float | None = None,
) -> str:
    """A task's record, its output facts and (optionally) its newest output."""
    if not isinstance(task, ShellTask):
        return render_other(task, preview_bytes=preview_bytes)
    text = record([*task_fields(task, now=now), *output_fields(task)])
    if preview_bytes <= 0:
        return text
    if task.log.total == 0:
        return text + "\n\n[output]\n(no output)"
    body, cut = preview(task, preview_bytes)
    shown = format_size(len(task.log.tail(preview_bytes)))
    body = body.rstrip("\n")
    if cut:
        where = (
            f"; the whole log is at {task.log.path} (page it with Read or search it with Grep)"
            if task.log.persisted
            else ""
        )
        head = f"[newest output: the last {shown} of {format_size(task.log.total)}{where}]"
    else:
        head = "[output]"
    return f"{text}\n\n{head}\n{body}"


def render_other(task: BackgroundTask, *, preview_bytes: int = 0) -> str:
    """A task that is not a command: its kind, description, outcome and newest output."""
    fields: list[tuple[str, object]] = [
        ("task_id", task.id),
        ("kind", task.kind),
        ("status", task.status.value),
    ]
    if not task.running:
        fields.append(("outcome", task.outcome()))
    fields += [("description", task.description), ("started_at", local_time(task.started_at))]
    if task.running:
        fields.append(("running_for", format_duration(ran_for(task))))
    else:
        fields.append(("ran_for", format_duration(ran_for(task))))
    if preview_bytes <= 0:
        return record(fields)
    out = task.output(preview_bytes)
    fields.append(("output_size", format_size(out.size)))
    if out.path is not None:
        fields.append(("output_path", out.path))
    text = record(fields)
    if out.size == 0:
        return text + "\n\n[output]\n(no output)"
    if out.more:
        where = (
            f"; the whole output is at {out.path} (page it with Read or search it with Grep)"
            if out.path is not None
            else ""
        )
        shown = format_size(len(out.text.encode()))
        head = f"[newest output: the last {shown} of {format_size(out.size)}{where}]"
    else:
        head = "[output]"
    body = out.text.rstrip("\n")
    return f"{text}\n\n{head}\n{body}"


def task_record(task: BackgroundTask, *, now: float | None = None) -> TaskRecord:
    """A task as structured data (see `TaskRecord`): the facts its text record shows."""
    shell = task if isinstance(task, ShellTask) else None
    if shell is not None:
        seconds = shell.runtime_seconds(now)
        size = shell.log.total
        path = str(shell.log.path) if shell.log.persisted else None
    else:
        seconds = ran_for(task)
        snapshot = task.output(1)  # for its size and path; 1 byte is cheap for any kind
        size = snapshot.size
        path = str(snapshot.path) if snapshot.path is not None else None
    ended = task.ended_at
    return TaskRecord(
        id=task.id,
        kind=task.kind,
        status=task.status.value,
        outcome=task.outcome(),
        description=task.description,
        command=shell.command if shell is not None else None,
        started_at=local_time(task.started_at),
        ended_at=local_time(ended) if ended is not None else None,
        seconds=round(seconds, 3),
        exit_code=shell.exit_code if shell is not None and not shell.running else None,
        signal=signal_name(shell.signal) if shell is not None and shell.signal else None,
        output_bytes=size,
        output_path=path,
    )


def newest_output(task: BackgroundTask, limit: int) -> tuple[str, bool]:
    """The newest output of a task of any kind (at most `limit` bytes, as `render_task`
    shows it), and whether that is only its end."""
    if isinstance(task, ShellTask):
        if task.log.total == 0:
            return "", False
        text, cut = preview(task, limit)
        return text.rstrip("\n"), cut
    out = task.output(limit)
    return out.text.rstrip("\n"), out.more
