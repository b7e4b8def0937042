"""The renderers of `deftly run`, fed hand-built events (the same ones a turn yields)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from deftly.agent.events import (
    Notice,
    Retrying,
    StepEnded,
    Text,
    TextDelta,
    ToolCall,
    ToolProgress,
    ToolResult,
    TurnEnded,
    TurnStarted,
)
from deftly.cli.run_live import LiveRenderer, raw_rows
from deftly.cli.run_render import JsonRenderer, PrintRenderer, exit_code, result_line
from deftly.contract.display import CommandDisplay
from deftly.contract.identity import Identity
from deftly.execution.events import ToolCallStarted
from deftly.providers.types import Usage

A, T = "main", "t1"


def end(reason: str = "end_turn", text: str = "done", **kw: object) -> TurnEnded:
    return TurnEnded(A, T, reason, text, 2, Usage(10, 5), "s-1", **kw)  # type: ignore[arg-type]


def result(call_id: str, name: str, output: str, *, error: bool = False) -> ToolResult:
    return ToolResult(A, T, call_id, name, error, output)


def test_print_mode_puts_the_answer_on_stdout_and_activity_on_stderr() -> None:
    answer, activity = io.StringIO(), io.StringIO()
    show = PrintRenderer(answer, activity)
    for event in [
        TurnStarted(A, T, "read it"),
        TextDelta(A, T, "Let me "),
        Text(A, T, "Let me read a.txt."),
        ToolCall(A, T, "c1", "Read", {"path": "a.txt"}),
        result("c1", "Read", "1\thello"),
        ToolCall(A, T, "c2", "Bash", {"command": "false"}),
        result("c2", "Bash", "\nexit status 1: false failed\nmore", error=True),
        StepEnded(A, T, 1, "tool_calls"),
        Text(A, T, "It says hello."),
        StepEnded(A, T, 2, "stop"),
        end(text="It says hello."),
    ]:
        show(event)
    assert answer.getvalue() == "It says hello.\n"
    assert activity.getvalue().splitlines() == [
        "Let me read a.txt.",
        "✓ Read: a.txt",
        "✗ Bash: false — exit status 1: false failed",
    ]


def test_print_mode_says_why_a_turn_stopped_early() -> None:
    answer, activity = io.StringIO(), io.StringIO()
    PrintRenderer(answer, activity, max_steps=1)(end("max_steps", text=""))
    assert answer.getvalue() == ""
    line = activity.getvalue()
    assert "stopped after 2 steps" in line and "--max-steps 1" in line and "--continue" in line
    failed = io.StringIO()
    PrintRenderer(io.StringIO(), failed)(end("error", text="", error="the server is down"))
    assert failed.getvalue() == "deftly: the server is down\n"


def test_print_mode_shows_retries_and_notices() -> None:
    activity = io.StringIO()
    show = PrintRenderer(io.StringIO(), activity)
    show(Retrying(A, T, 1, 2.0, "429 rate limited"))
    show(Notice(A, T, "task_finished", "task t1 ended"))
    assert activity.getvalue() == "… 429 rate limited (retry 1 in 2.0s)\n… task t1 ended\n"


def test_exit_codes_by_stop_reason() -> None:
    assert exit_code(end("end_turn")) == 0
    assert exit_code(end("cancelled")) == 130
    for reason in ("max_steps", "stop_turn", "budget", "error"):
        assert exit_code(end(reason)) == 1


def test_a_result_line_without_a_record_uses_the_arguments() -> None:
    line = result_line(result("c", "Grep", "x"), {"pattern": "TODO", "path": "src"})
    assert line == "✓ Grep: TODO"
    assert result_line(result("c", "TaskList", ""), {}) == "✓ TaskList"


def test_json_mode_prints_every_event_but_the_deltas_one_per_line() -> None:
    stream = io.StringIO()
    show = JsonRenderer(stream)
    show(TurnStarted(A, T, "hi"))
    show(TextDelta(A, T, "he"))
    show(Text(A, T, "hello"))
    show(ToolCall(A, T, "c1", "Read", {"path": "a"}))
    show(result("c1", "Read", "x"))
    show(end(text="hello"))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["type"] for line in lines] == [
        "turn_start",
        "text",
        "tool_call",
        "tool_result",
        "turn_end",
    ]
    assert lines[-1]["stop_reason"] == "end_turn" and lines[-1]["session_id"] == "s-1"


def live(width: int = 40) -> tuple[LiveRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, height=30, color_system=None)
    return LiveRenderer(console), out


def test_raw_rows_counts_wrapped_lines() -> None:
    assert raw_rows("abc", 10) == 1
    assert raw_rows("a" * 25, 10) == 3
    assert raw_rows("one\ntwo\n", 10) == 3  # the cursor sits on the empty third row


def test_streamed_text_is_replaced_by_its_markdown() -> None:
    show, out = live()
    show(TextDelta(A, T, "Some **bold"))
    show(TextDelta(A, T, "** words"))
    assert out.getvalue().endswith("Some **bold** words")
    show(Text(A, T, "Some **bold** words"))
    rendered = out.getvalue()
    raw, _, after = rendered.partition("\r\x1b[J")  # erased...
    assert raw.endswith("Some **bold** words")
    assert "Some bold words" in after and "**" not in after  # ...and drawn as Markdown


def started(call_id: str, name: str, display: CommandDisplay | None) -> ToolCallStarted:
    return ToolCallStarted(call_id, name, {}, display=display, identity=Identity("s", A))


def test_a_tool_call_shows_its_command_and_live_output_then_a_mark() -> None:
    show, out = live(80)
    show(ToolCall(A, T, "c1", "Bash", {"command": "make test"}))
    show.runtime_event(
        ToolCallStarted(
            "c1",
            "Bash",
            {},
            display=CommandDisplay(command="make test"),
            identity=Identity("s", A),
        )
    )
    show(ToolProgress(A, T, "c1", "Bash", "ok 1\n"))
    show(result("c1", "Bash", "ok 1\nok 2"))
    text = out.getvalue()
    assert text.index("● Bash") < text.index("make test") < text.index("ok 1")
    assert text.count("● Bash") == 1
    assert "✓ Bash (2 lines)" in text
    show(ToolCall(A, T, "c2", "Edit", {"path": "a"}))
    show(result("c2", "Edit", "The file a was edited."))
    assert "● Edit  a" in out.getvalue()  # never announced: the header comes with the result
    assert "✓ Edit  The file a was edited." in out.getvalue()


def test_another_agents_announcement_is_not_shown() -> None:
    show, out = live()
    show.runtime_event(
        ToolCallStarted(
            "c9", "Bash", {}, display=CommandDisplay(command="x"), identity=Identity("s", "child-1")
        )
    )
    assert out.getvalue() == ""


def test_output_is_held_while_an_approval_is_asked() -> None:
    show, out = live()
    show(TextDelta(A, T, "Working"))
    with show.holding():
        before = out.getvalue()
        show(TextDelta(A, T, " more"))
        show(ToolCall(A, T, "c1", "Write", {"path": "b.txt"}))
        show.runtime_event(started("c1", "Write", None))
        assert out.getvalue() == before  # nothing while the question is on screen
    assert "more" in out.getvalue() and "● Write" in out.getvalue()


def test_an_announcement_waits_for_the_turns_own_events_before_it() -> None:
    show, out = live(80)
    show.runtime_event(started("c1", "Bash", CommandDisplay(command="make")))
    assert out.getvalue() == ""  # the turn's queued text comes first
    show(TextDelta(A, T, "Building now."))
    show(Text(A, T, "Building now."))
    show(ToolCall(A, T, "c1", "Bash", {"command": "make"}))
    text = out.getvalue()
    assert text.rindex("Building now.") < text.index("● Bash") < text.rindex("make")


def test_a_failed_call_shows_its_error_and_a_cancelled_turn_says_so() -> None:
    show, out = live(80)
    show(ToolCall(A, T, "c1", "Bash", {"command": "sleep 30"}))
    show(result("c1", "Bash", "The call was cancelled.", error=True))
    show(end("cancelled", text=""))
    text = out.getvalue()
    assert "✗ Bash failed" in text and "The call was cancelled." in text
    assert "the turn was cancelled" in text and "2 steps" in text
