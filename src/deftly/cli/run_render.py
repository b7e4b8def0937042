"""How `deftly run` shows a turn's events in print mode: the answer on stdout, one line per
tool call on stderr (or, with --json, one JSON object a line on stdout).

The interactive session renders with rich instead (`run_live.py`); both read the same
`deftly.agent.events` a turn yields.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from deftly.agent.events import (
    AgentEvent,
    ContextChanged,
    Notice,
    ReasoningDelta,
    Retrying,
    StepEnded,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnEnded,
)
from deftly.cli.state_display import ListMemory, checklist, goal_detail, todo_summary
from deftly.contract.display import (
    AgentCallDisplay,
    CommandDisplay,
    DiffDisplay,
    Display,
    FileIODisplay,
    GenericDisplay,
    GoalStartDisplay,
    SearchDisplay,
    SkillCallDisplay,
    TaskDisplay,
    TaskStopDisplay,
    TodoListDisplay,
    UrlFetchDisplay,
)
from deftly.features.notify.notification import NOTICE_KIND as NOTIFY_KIND

OK_MARK = "✓"
ERROR_MARK = "✗"
_SUMMARY_CHARS = 100

INTERRUPTED = 130
_TELLING_KEYS = ("command", "pattern", "query", "path", "file_path", "url", "skill", "prompt")


def exit_code(end: TurnEnded) -> int:
    """0 when the model ended its turn, 130 when the person interrupted it, 1 for any other
    stop (max steps, a budget, a tool that ended the turn, a provider error)."""
    if end.stop_reason == "end_turn":
        return 0
    if end.stop_reason == "cancelled":
        return INTERRUPTED
    return 1


def stop_message(end: TurnEnded, max_steps: int | None = None) -> str | None:
    """One line saying why a turn stopped before the model ended it, and what to do next
    (None when the model ended it)."""
    match end.stop_reason:
        case "end_turn":
            return None
        case "max_steps":
            limit = f" (--max-steps {max_steps})" if max_steps else ""
            return (
                f"the turn stopped after {end.steps} steps, the most allowed{limit}; "
                "run again with --continue to go on, or raise --max-steps"
            )
        case "budget":
            why = f": {_first_sentence(end.error).rstrip('.')}" if end.error else ""
            return (
                f"the turn stopped because a budget ran out{why}; run again with --continue "
                "to go on (the model is told why it stopped)"
            )
        case "stop_turn":
            why = f": {end.error}" if end.error else ""
            return f"a tool result ended the turn{why}"
        case "cancelled":
            return "the turn was cancelled; tools still running were stopped"
        case _:
            return end.error or "the model request failed; see the lines above"


def _first_sentence(text: str) -> str:
    """What a budget's reason says before it turns to the model ("Summarise...")."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def one_line(text: str, limit: int = _SUMMARY_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


NOTIFY_MARK = "🔔"
"""Marks NotifyUser's notice: a message for the person, shown as it is (not as activity)."""

QUIET_NOTICES = frozenset({"permission"})
"""Notices kept out of the text views: each call's permission record (its ✓ or ✗ line
says how it went; --json still has them)."""


def relative(path: str, root: str | None) -> str:
    """`path` inside the workspace `root` as a relative path, else as it is."""
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return path


def display_summary(display: Display | None, root: str | None = None) -> str | None:
    """What a call works on, in a few words: the command, the path (relative to the
    workspace `root`), the search."""
    match display:
        case CommandDisplay(command=command):
            return command
        case FileIODisplay(path=path, detail=detail):
            return relative(path, root) + (f" {detail}" if detail else "")
        case DiffDisplay(path=path):
            return relative(path, root)
        case SearchDisplay(query=query, scope=scope):
            return repr(query) + (f" in {scope}" if scope else "")
        case UrlFetchDisplay(url=url):
            return url
        case SkillCallDisplay(skill_name=name, args=args):
            return name + (f" {args}" if args else "")
        case AgentCallDisplay(agent_name=name, prompt=prompt):
            return f"{name}: {prompt}"
        case TaskDisplay(task_id=task_id, description=description):
            return f"{task_id} {description}"
        case TaskStopDisplay(task_id=task_id):
            return task_id
        case TodoListDisplay():
            return todo_summary(display)
        case GoalStartDisplay(objective=objective):
            return objective
        case GenericDisplay(summary=summary):
            return summary
        case _:
            return None


def arguments_summary(arguments: Any) -> str:
    """A call's arguments, compactly, when its display says nothing."""
    if isinstance(arguments, dict):
        if not arguments:
            return ""
        for key in _TELLING_KEYS:
            if isinstance(arguments.get(key), str):
                return str(arguments[key])
        values = [v for v in arguments.values() if isinstance(v, str | int | float)]
        if len(arguments) == 1 and values:
            return str(values[0])
        return json.dumps(arguments, ensure_ascii=False, default=str)
    return str(arguments) if arguments is not None else ""


def call_summary(event: ToolResult, arguments: Any = None, root: str | None = None) -> str:
    """`Name: what it worked on` for one finished call."""
    call = event.call
    said = display_summary(call.display, root) if call is not None else None
    if said is None and call is not None and call.description:
        said = call.description
    if said is None:
        said = arguments_summary(call.args if call is not None else arguments)
    return f"{event.name}: {one_line(said)}" if said else event.name


def detail_lines(display: Display | None, todos: ListMemory) -> list[str]:
    """Lines under a successful call's result line: a todo list as a checklist (unless
    `todos` says it was just shown), a new goal's completion criterion."""
    match display:
        case TodoListDisplay() if todos.is_new(display):
            return checklist(display.items)
        case GoalStartDisplay():
            detail = goal_detail(display)
            return [detail] if detail else []
        case _:
            return []


def result_line(event: ToolResult, arguments: Any = None, root: str | None = None) -> str:
    """`✓ Read: a.txt`, or `✗ Bash: make — the first line of the error`."""
    mark = ERROR_MARK if event.is_error else OK_MARK
    line = f"{mark} {call_summary(event, arguments, root)}"
    if event.is_error:
        first = next((ln for ln in event.output.splitlines() if ln.strip()), "")
        if first:
            line += f" — {one_line(first, 160)}"
    return line


class PrintRenderer:
    """Print mode: tool activity and notices on `activity` (stderr), the final answer on
    `answer` (stdout). Text the model wrote between tool calls is activity too; only the
    turn's final text is the answer."""

    def __init__(
        self,
        answer: TextIO,
        activity: TextIO,
        *,
        max_steps: int | None = None,
        root: str | None = None,
    ) -> None:
        self.answer = answer
        self.activity = activity
        self.max_steps = max_steps
        self.root = root
        self._arguments: dict[str, Any] = {}
        self._step_texts: list[str] = []
        self._step_called = False
        self._todos = ListMemory()

    def __call__(self, event: AgentEvent) -> None:
        """Show one event."""
        match event:
            case Text(text=text):
                self._step_texts.append(text)
                if self._step_called:
                    self._flush_texts()
            case ToolCall(id=call_id, arguments=arguments):
                self._step_called = True
                self._arguments[call_id] = arguments
                self._flush_texts()
            case ToolResult():
                self._say(result_line(event, self._arguments.pop(event.id, None), self.root))
                if not event.is_error and event.call is not None:
                    for line in detail_lines(event.call.display, self._todos):
                        self._say(f"  {line}")
            case StepEnded():
                self._step_texts, self._step_called = [], False
            case Retrying(attempt=attempt, delay=delay, error=error):
                self._say(f"… {one_line(error, 200)} (retry {attempt} in {delay:.1f}s)")
            case ContextChanged(kind=kind, tokens_before=tokens, detail=detail):
                what = "old tool outputs elided" if kind == "elided" else "older turns compacted"
                self._say(
                    f"… context: {what} (was {tokens:,} tokens){': ' + detail if detail else ''}"
                )
            case Notice(kind=kind, text=text) if kind == NOTIFY_KIND:
                self._say(f"{NOTIFY_MARK} {text}")
            case Notice(kind=kind, text=text) if kind not in QUIET_NOTICES:
                self._say(f"… {text}")
            case TurnEnded():
                self._end(event)
            case _:
                pass

    def _flush_texts(self) -> None:
        """Text before (or among) a step's tool calls is not the answer: it is activity."""
        for text in self._step_texts:
            self._say(text.strip())
        self._step_texts = []

    def _end(self, end: TurnEnded) -> None:
        if end.text.strip():
            self.answer.write(end.text.rstrip("\n") + "\n")
            self.answer.flush()
        message = stop_message(end, self.max_steps)
        if message:
            self._say(f"deftly: {message}")

    def _say(self, line: str) -> None:
        if line:
            self.activity.write(line + "\n")
            self.activity.flush()


class JsonRenderer:
    """`--json`: each event's `to_json()` as one line on `stream`, except the deltas (the
    complete `text` and `reasoning` events carry the same words)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: AgentEvent) -> None:
        """Print one event's line (deltas are skipped)."""
        if isinstance(event, TextDelta | ReasoningDelta):
            return
        self.stream.write(json.dumps(event.to_json(), ensure_ascii=False, default=str) + "\n")
        self.stream.flush()
