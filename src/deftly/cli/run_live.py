"""How the interactive session shows a turn: the model's text streamed raw as it comes and
rendered again as Markdown when the run is complete, each tool call with its display (the
command of a Bash, the diff of an Edit) and its live output, then ✓ or ✗.

Everything goes through one `LiveRenderer`, so the runtime's call announcements (which
carry the display) and the turn's own events never print over each other: an
announcement waits until the turn's `ToolCall` event for it has been shown (the turn's
events are queued, the runtime's arrive at once). While an approval is asked, output is
held back (`holding()`) and shown after the answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text as RichText

from deftly.agent.events import (
    AgentEvent,
    ContextChanged,
    Notice,
    Reasoning,
    ReasoningDelta,
    Retrying,
    Text,
    TextDelta,
    ToolCall,
    ToolProgress,
    ToolResult,
    TurnEnded,
)
from deftly.cli.render import render_display
from deftly.cli.run_render import (
    ERROR_MARK,
    NOTIFY_MARK,
    OK_MARK,
    QUIET_NOTICES,
    arguments_summary,
    display_summary,
    one_line,
    stop_message,
)
from deftly.cli.state_display import ListMemory
from deftly.contract.display import (
    CommandDisplay,
    DiffDisplay,
    Display,
    FileIODisplay,
    GoalStartDisplay,
    PlanReviewDisplay,
    TodoListDisplay,
)
from deftly.contract.identity import MAIN_AGENT
from deftly.execution.events import Event, ToolCallStarted
from deftly.features.notify.notification import NOTICE_KIND as NOTIFY_KIND

_ERROR_LINES = 6


def shows_body(display: Display | None) -> bool:
    """Displays worth more than the header line: a command, a diff, a written file, a plan,
    a todo list, a new goal."""
    match display:
        case CommandDisplay() | DiffDisplay() | PlanReviewDisplay():
            return True
        case TodoListDisplay() | GoalStartDisplay():
            return True
        case FileIODisplay(operation="edit" | "write"):
            return True
        case _:
            return False


def raw_rows(text: str, width: int) -> int:
    """How many terminal rows `text` took when written raw at `width` columns (the
    terminal wrapping long lines); the cursor is on the last of them."""
    width = max(1, width)
    return sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))


class LiveRenderer:
    """Renders one session's turns on `console` (stdout)."""

    def __init__(
        self, console: Console, *, agent_id: str = MAIN_AGENT, root: str | None = None
    ) -> None:
        self.console = console
        self.agent_id = agent_id
        self.root = root
        self._raw = ""  # the text run streamed raw so far
        self._raw_kind: str | None = None  # "text" or "reasoning" while a run is open
        self._closed_runs = 0  # runs ended early (a call came first); their Text is skipped
        self._headers: set[str] = set()
        self._bodies: set[str] = set()
        self._arguments: dict[str, Any] = {}
        self._called: set[str] = set()  # calls whose ToolCall event was shown
        self._announced: dict[str, ToolCallStarted] = {}  # announcements waiting for it
        self._progress_open = False
        self._holding = 0
        self._pending: list[AgentEvent | ToolCallStarted] = []
        self._todos = ListMemory()
        self.max_steps: int | None = None

    # -- entry points ----------------------------------------------------------------

    def __call__(self, event: AgentEvent) -> None:
        """Show one event of the turn (held back while an approval is asked)."""
        if self._holding:
            self._pending.append(event)
            return
        self._show(event)

    def runtime_event(self, event: Event) -> None:
        """A runtime event: a call's announcement brings its display (a bus listener)."""
        if not isinstance(event, ToolCallStarted) or event.identity.agent_id != self.agent_id:
            return
        if event.call_id not in self._called:
            self._announced[event.call_id] = event  # shown after the turn's own ToolCall
            return
        if self._holding:
            self._pending.append(event)
            return
        self._started(event)

    def shown_elsewhere(self, call_id: str) -> None:
        """The call's display was shown already (in an approval question)."""
        self._bodies.add(call_id)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Hold output back (an approval question owns the terminal), then show it."""
        self.end_run()
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
            if not self._holding:
                pending, self._pending = self._pending, []
                for event in pending:
                    if isinstance(event, ToolCallStarted):
                        self._started(event)
                    else:
                        self._show(event)

    def end_run(self) -> None:
        """Close a text run streamed raw (its Markdown render is then skipped) and any
        live output, so the next line starts clean."""
        if self._raw_kind is not None:
            if not self._raw.endswith("\n"):
                self.console.file.write("\n")
            if self._raw_kind == "text":
                self._closed_runs += 1
            self._raw, self._raw_kind = "", None
            self.console.file.flush()
        if self._progress_open:
            self.console.file.write("\n")
            self._progress_open = False

    # -- the events ------------------------------------------------------------------

    def _show(self, event: AgentEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._stream("text", text)
            case ReasoningDelta(text=text):
                self._stream("reasoning", text)
            case Text(text=text):
                self._text_done(text)
            case Reasoning():
                if self._raw_kind == "reasoning":
                    self.end_run()
            case ToolCall(id=call_id, arguments=arguments):
                self._arguments[call_id] = arguments
                self._called.add(call_id)
                announced = self._announced.pop(call_id, None)
                if announced is not None:
                    self._started(announced)
            case ToolProgress(text=text):
                self._progress(text)
            case ToolResult():
                self._result(event)
            case Retrying(attempt=attempt, delay=delay, error=error):
                self._line(
                    f"[yellow]… {escape(one_line(error, 200))} "
                    f"(retry {attempt} in {delay:.1f}s)[/yellow]"
                )
            case ContextChanged(kind=kind, tokens_before=tokens):
                what = "old tool outputs elided" if kind == "elided" else "older turns compacted"
                self._line(f"[dim]… context: {what} (was {tokens:,} tokens)[/dim]")
            case Notice(kind=kind, text=text) if kind == NOTIFY_KIND:
                self._line(f"[bold yellow]{NOTIFY_MARK} {escape(text)}[/bold yellow]")
            case Notice(kind=kind, text=text) if kind not in QUIET_NOTICES:
                self._line(f"[dim]… {escape(text)}[/dim]")
            case TurnEnded():
                self._ended(event)
            case _:
                pass

    def _stream(self, kind: str, text: str) -> None:
        if self._progress_open or (self._raw_kind is not None and self._raw_kind != kind):
            self.end_run()
        if self._raw_kind is None and not text.strip():
            return  # no run starts with blank space
        self._raw_kind = kind
        self._raw += text
        style = "dim italic" if kind == "reasoning" else None
        self.console.print(text, end="", style=style, markup=False, highlight=False, soft_wrap=True)
        self.console.file.flush()

    def _text_done(self, text: str) -> None:
        """A complete text run: what was streamed raw is replaced by its Markdown."""
        if self._raw_kind == "text":
            rows = raw_rows(self._raw, self.console.width)
            if self.console.is_terminal and rows <= self.console.height:
                up = f"\x1b[{rows - 1}A" if rows > 1 else ""
                self.console.file.write("\r" + up + "\x1b[J")
                self._raw, self._raw_kind = "", None
                self.console.print(Markdown(text.strip()))
            else:
                self.end_run()
                self._closed_runs -= 1
            return
        if self._closed_runs:
            self._closed_runs -= 1  # already shown raw, interrupted by a tool call
            return
        if text.strip():  # never streamed (a server that cannot stream)
            self.end_run()
            self.console.print(Markdown(text.strip()))

    def _header(self, call_id: str, name: str, display: Display | None) -> None:
        if call_id in self._headers:
            return
        self.end_run()
        self._headers.add(call_id)
        said = display_summary(display, self.root)
        if not said:
            said = arguments_summary(self._arguments.get(call_id))
        detail = f"  [dim]{escape(one_line(said))}[/dim]" if said else ""
        self.console.print(
            f"[bold cyan]●[/bold cyan] [bold]{escape(name)}[/bold]{detail}", highlight=False
        )

    def _started(self, event: ToolCallStarted) -> None:
        self._header(event.call_id, event.name, event.display)
        if event.call_id in self._bodies or not shows_body(event.display):
            return
        if isinstance(event.display, TodoListDisplay) and not self._todos.is_new(event.display):
            return  # the list shown last, read back
        self._bodies.add(event.call_id)
        shown = render_display(event.display)
        if shown is not None:
            self.end_run()
            self.console.print(Padding(shown, (0, 0, 0, 2)))

    def _progress(self, text: str) -> None:
        if self._raw_kind is not None:
            self.end_run()
        self.console.print(text, end="", style="dim", markup=False, highlight=False, soft_wrap=True)
        self._progress_open = not text.endswith("\n")
        self.console.file.flush()

    def _result(self, event: ToolResult) -> None:
        display = event.call.display if event.call is not None else None
        self._header(event.id, event.name, display)
        self.end_run()
        if event.is_error:
            lines = [ln for ln in event.output.splitlines() if ln.strip()][:_ERROR_LINES]
            self.console.print(
                f"  [red]{ERROR_MARK} {escape(event.name)} failed[/red]", highlight=False
            )
            if lines:
                body = RichText("\n".join(lines), style="red")
                self.console.print(Padding(body, (0, 0, 0, 4)))
        else:
            lines = [ln for ln in event.output.splitlines() if ln.strip()]
            said = f"  {one_line(lines[0], 80)}" if len(lines) == 1 else ""
            said = f" ({len(lines)} lines)" if len(lines) > 1 else said
            self.console.print(
                f"  [green]{OK_MARK}[/green] [dim]{escape(event.name)}{escape(said)}[/dim]",
                highlight=False,
            )

    def _ended(self, end: TurnEnded) -> None:
        self.end_run()
        message = stop_message(end, self.max_steps)
        if message:
            colour = "yellow" if end.stop_reason in ("cancelled", "max_steps") else "red"
            self.console.print(f"[{colour}]{escape(message)}[/{colour}]", highlight=False)
        usage = end.usage
        self.console.print(
            f"[dim]{end.steps} step{'s' if end.steps != 1 else ''} · "
            f"{usage.input_tokens:,} tokens in · {usage.output_tokens:,} out[/dim]",
            highlight=False,
        )
        self._headers.clear()
        self._bodies.clear()
        self._arguments.clear()
        self._called.clear()
        self._announced.clear()
        self._closed_runs = 0

    def _line(self, markup: str) -> None:
        self.end_run()
        self.console.print(markup, highlight=False)
