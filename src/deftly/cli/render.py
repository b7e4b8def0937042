"""Terminal rendering, kept apart from logic: a call's display, its result, tool lists."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from deftly.cli.state_display import checklist, goal_detail
from deftly.contract.display import (
    CommandDisplay,
    DiffDisplay,
    Display,
    FileIODisplay,
    GenericDisplay,
    GoalStartDisplay,
    PlanReviewDisplay,
    SearchDisplay,
    TodoListDisplay,
    UrlFetchDisplay,
    replacement_text,
    unified_diff,
)
from deftly.contract.result import ImagePart, TextPart
from deftly.execution.calls import CallResult
from deftly.execution.events import Event, ToolProgress
from deftly.runtime import Runtime, ToolInfo

_PREVIEW_LINES = 400
_TODO_STYLES = {"done": "green", "in_progress": "bold yellow", "pending": ""}


def render_display(display: Display | None) -> RenderableType | None:
    """What the call is about to do, the way a person wants to see it."""
    from rich.syntax import Syntax  # with pygments: only when a display is shown

    match display:
        case None:
            return None
        case CommandDisplay(command=command, cwd=cwd, description=description):
            title = Text(f"$ (in {cwd})", style="dim") if cwd else None
            body = Syntax(command, "bash", word_wrap=True, background_color="default")
            said = Text(description, style="italic") if description else None
            return Group(*(part for part in (said, title, body) if part is not None))
        case FileIODisplay(operation="edit", path=path, before=before, after=after) if (
            before is not None and after is not None
        ):
            text = replacement_text(path, before, after)
            return Syntax(text, "diff", background_color="default")
        case DiffDisplay(path=path, before=before, after=after, new_file=new_file):
            diff = unified_diff(path, before, after, new_file=new_file)
            shown = Syntax(diff or "(no change)", "diff", background_color="default")
            return Group(Text(f"new file {path}", style="bold"), shown) if new_file else shown
        case FileIODisplay(operation="write", path=path, content=content) if content is not None:
            head = "\n".join(content.splitlines()[:40])
            return Group(Text(f"write {path}", style="bold"), Text(head, style="green"))
        case FileIODisplay(operation=operation, path=path, detail=detail):
            return Text(f"{operation} {path}" + (f"  {detail}" if detail else ""))
        case SearchDisplay(query=query, scope=scope):
            return Text(f"search {query!r}" + (f" in {scope}" if scope else ""))
        case UrlFetchDisplay(url=url, method=method):
            return Text(f"{method or 'GET'} {url}")
        case PlanReviewDisplay(plan=plan):
            return Syntax(plan, "markdown", word_wrap=True, background_color="default")
        case TodoListDisplay(items=items):
            lines = checklist(items)
            styles = [_TODO_STYLES.get(item.status, "") for item in items] or ["dim"]
            return Text("\n").join(
                Text(line, style) for line, style in zip(lines, styles, strict=True)
            )
        case GoalStartDisplay(objective=objective, mode=mode):
            detail = goal_detail(display)
            parts = [Text(f"goal: {objective}", style="bold")]
            parts += [Text(detail)] if detail else []
            parts.append(Text(f"runs in {mode} mode", style="dim"))
            return Group(*parts)
        case GenericDisplay(summary=summary, detail=detail):
            extra = json.dumps(detail, indent=2, default=str) if detail is not None else ""
            return Group(Text(summary), Text(extra, style="dim")) if extra else Text(summary)
        case _:
            return Text(json.dumps(display.model_dump(exclude_none=True), default=str))


def _output_renderable(call: CallResult) -> RenderableType:
    output = call.result.output
    if isinstance(output, str):
        lines = output.splitlines()
        shown = "\n".join(lines[:_PREVIEW_LINES])
        if len(lines) > _PREVIEW_LINES:
            shown += f"\n… {len(lines) - _PREVIEW_LINES} more lines (use --json for everything)"
        return Text(shown, style="red" if call.is_error else "")
    parts: list[RenderableType] = []
    for part in output:
        if isinstance(part, TextPart):
            parts.append(Text(part.text))
        elif isinstance(part, ImagePart):
            parts.append(
                Text(f"[image {part.mime_type}, {len(part.data) * 3 // 4:,} bytes]", style="cyan")
            )
        else:
            parts.append(Text(f"[{part.type} content]", style="cyan"))
    return Group(*parts)


def render_call(console: Console, call: CallResult, *, show_display: bool = True) -> None:
    """Print one call's result at the terminal: a panel titled with the tool and its status, holding
    the display (a diff, a command) and the output."""
    status = "[red]error[/red]" if call.is_error else "[green]ok[/green]"
    title = f"[bold]{call.name}[/bold] · {status}"
    if call.description:
        title += f" · {call.description}"
    body: list[RenderableType] = []
    display = render_display(call.display) if show_display else None
    if display is not None:
        body.append(display)
        body.append(Text(""))
    body.append(_output_renderable(call))
    if call.note:
        body.append(Text(call.note, style="dim italic"))
    border = "red" if call.is_error else "green"
    console.print(Panel(Group(*body), title=title, title_align="left", border_style=border))


def tools_table(tools: Sequence[ToolInfo]) -> Table:
    """The table `deftly tools` prints: name, source, disclosure and the description's first
    sentence."""
    table = Table(show_lines=False, header_style="bold")
    table.add_column("tool", style="bold cyan", no_wrap=True)
    table.add_column("source")
    table.add_column("disclosure")
    table.add_column("description")
    for info in tools:
        table.add_row(info.name, info.source, info.disclosure, first_sentence(info.description))
    return table


def first_sentence(text: str) -> str:
    """The first sentence of a description's first paragraph (its summary)."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[: end + 1]


def output_json(output: Any) -> Any:
    """A result's output as JSON: the text, or a list of typed parts."""
    if isinstance(output, str):
        return output
    out = []
    for part in output:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        else:
            out.append({"type": part.type, "mime_type": part.mime_type, "data": part.data})
    return out


def call_json(
    call: CallResult, *, with_times: bool = False, with_display: bool = True
) -> dict[str, Any]:
    """One call's result as the JSON object `deftly call/batch --json` prints (with the times and
    the display when asked)."""
    data: dict[str, Any] = {
        "tool_call_id": call.tool_call_id,
        "name": call.name,
        "is_error": call.is_error,
        "output": output_json(call.result.output),
        "note": call.note,
        "truncated": call.truncated,
    }
    if with_display:
        data["display"] = call.display.model_dump(exclude_none=True) if call.display else None
    if with_times:
        data["started_at"] = call.started_at
        data["finished_at"] = call.finished_at
    return data


class LiveOutput:
    """A running command's output as it arrives, for a person watching a terminal (the
    result panel still follows when the call ends)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        if not isinstance(event, ToolProgress):
            return
        update = event.update
        if update.kind in ("stdout", "stderr") and update.text:
            self.stream.write(update.text)
            self.stream.flush()


def stream_output(runtime: Runtime) -> Callable[[], None] | None:
    """At a terminal (stderr is one), show Bash output live on stderr."""
    stream = sys.stderr
    if stream is None or not stream.isatty():
        return None
    return runtime.subscribe(LiveOutput(stream))
