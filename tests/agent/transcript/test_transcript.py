"""Transcripts: what the writer records, the loader restores — whole, torn, or cut mid-step."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from deftly.agent.transcript import (
    INTERRUPTED,
    TranscriptWriter,
    latest_session,
    load_transcript,
    pair_results,
    transcript_path,
)
from deftly.providers.types import (
    ImagePart,
    Message,
    TextPart,
    ThinkPart,
    ToolCallRequest,
    Usage,
)
from deftly.session.paths import data_home, session_dir

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def assistant(*calls: tuple[str, str], text: str = "") -> Message:
    return Message(
        "assistant",
        (TextPart(text),) if text else (),
        tool_calls=tuple(ToolCallRequest(i, n, json.dumps({"path": f"{i}.txt"})) for i, n in calls),
    )


def result(call_id: str, text: str, *, name: str = "Read", error: bool = False) -> Message:
    return Message("tool", (TextPart(text),), tool_call_id=call_id, name=name, is_error=error)


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_turn(
    writer: TranscriptWriter, turn: int, prompt: str, steps: list[list[Message]]
) -> None:
    writer.turn_started(turn, prompt)
    writer.message(Message.user(prompt), turn=turn, step=0)
    total = Usage()
    for number, messages in enumerate(steps, 1):
        for message in messages:
            writer.message(message, turn=turn, step=number)
        usage = Usage(1000 * number, 10, 500, 0)
        total += usage
        writer.step_ended(turn=turn, step=number, usage=usage, finish_reason="tool_calls")
    writer.turn_ended(turn=turn, stop_reason="end_turn", steps=len(steps), usage=total)


def test_the_path_is_under_transcripts_and_odd_agent_ids_get_a_file_name_of_their_own(
    tmp_path: Path,
) -> None:
    assert transcript_path(tmp_path, "main") == tmp_path / "transcripts" / "main.jsonl"
    child = transcript_path(tmp_path, "main/review")
    other = transcript_path(tmp_path, "main_review")
    assert child.parent == tmp_path / "transcripts" and "/" not in child.name
    assert child != other


def test_every_part_type_calls_errors_images_and_usage_round_trip(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    history = [
        Message.user("fix the test"),
        Message(
            "assistant",
            (
                ThinkPart("let me look", signature="sig-9"),
                ThinkPart("", redacted="ENCRYPTED"),
                TextPart("Reading it."),
            ),
            tool_calls=(
                ToolCallRequest("c1", "Read", '{"path": "a.py"}'),
                ToolCallRequest("c2", "Bash", '{"command": "pytest'),  # malformed, kept raw
            ),
            meta={"step": 1},
        ),
        result("c1", "1\tprint('hi')"),
        result(
            "c2", "<system>ERROR: the tool call failed.</system>\nexit 1", name="Bash", error=True
        ),
        Message("user", (TextPart("look at this"), ImagePart("image/png", PNG))),
        Message("assistant", (TextPart("Done."),)),
    ]
    writer = TranscriptWriter(path)
    writer.turn_started(1, "fix the test")
    for message in history:
        writer.message(message, turn=1, step=1)
    writer.step_ended(turn=1, step=1, usage=Usage(1200, 30, 800, 100), finish_reason="tool_calls")
    writer.step_ended(turn=1, step=2, usage=Usage(1500, 40, 1200, 0), finish_reason="end_turn")
    writer.turn_ended(turn=1, stop_reason="end_turn", steps=2, usage=Usage(2700, 70, 2000, 100))
    writer.close()

    assert all(r["v"] == 1 for r in records(path))
    restored = load_transcript(path)
    assert restored.messages == history
    assert restored.usage == Usage(2700, 70, 2000, 100)
    assert (restored.turns, restored.steps) == (1, 2)
    assert restored.last_prompt_tokens == 1500
    assert restored.skipped == restored.repaired == 0
    assert restored.last_prompt == "fix the test"


def test_a_second_writer_appends_and_turns_add_up(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    first = TranscriptWriter(path)
    write_turn(first, 1, "one", [[assistant(("a", "Read")), result("a", "A")]])
    first.close()
    second = TranscriptWriter(path)
    write_turn(second, 2, "two", [[assistant(text="ok")]])
    second.close()
    restored = load_transcript(path)
    assert [m.role for m in restored.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert restored.messages[3].text == "two"
    assert (restored.turns, restored.steps) == (2, 2)


def test_a_torn_last_line_is_skipped_and_the_next_writer_starts_a_fresh_line(
    tmp_path: Path,
) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    write_turn(writer, 1, "one", [[assistant(("a", "Read")), result("a", "A")]])
    writer.close()
    whole = load_transcript(path)
    line = json.dumps(
        {"v": 1, "type": "message", "turn": 2, "step": 1, "message": {"role": "user"}}
    )
    with open(path, "a") as handle:
        handle.write(line[: len(line) // 2])  # the crash came mid-write

    torn = load_transcript(path)
    assert torn.messages == whole.messages and torn.skipped == 1

    again = TranscriptWriter(path)
    write_turn(again, 2, "two", [[assistant(text="fine")]])
    again.close()
    restored = load_transcript(path)
    assert restored.skipped == 1
    assert [m.text for m in restored.messages[-2:]] == ["two", "fine"]


def test_a_step_cut_mid_way_gets_interrupted_results_for_its_unrecorded_calls(
    tmp_path: Path,
) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    writer.turn_started(1, "go")
    writer.message(Message.user("go"), turn=1, step=0)
    writer.message(assistant(("a", "Read"), ("b", "Bash"), ("c", "Read")), turn=1, step=1)
    writer.message(result("b", "ran"), turn=1, step=1)
    writer.close()  # a crash: no results for a and c, no step_end, no turn_end

    restored = load_transcript(path)
    assert restored.repaired == 2
    roles = [(m.role, m.tool_call_id) for m in restored.messages]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("tool", "b"),
        ("tool", "a"),
        ("tool", "c"),
    ]
    for made in restored.messages[3:]:
        assert made.is_error and made.text == INTERRUPTED
    assert restored.messages[3].name == "Read"


def test_pairing_drops_orphans_and_duplicates_and_fills_holes_before_the_next_message() -> None:
    history = [
        Message.user("go"),
        result("ghost", "no call made this"),
        assistant(("a", "Read"), ("b", "Read")),
        result("a", "A"),
        result("a", "A again"),
        Message.user("<system>a reminder</system>"),
        assistant(text="done"),
    ]
    paired, made = pair_results(history)
    assert made == 1
    assert [(m.role, m.tool_call_id, m.text[:6]) for m in paired] == [
        ("user", None, "go"),
        ("assistant", None, ""),
        ("tool", "a", "A"),
        ("tool", "b", INTERRUPTED[:6]),
        ("user", None, "<syste"),
        ("assistant", None, "done"),
    ]


def test_a_replaced_record_restarts_the_history_and_later_records_follow_it(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    write_turn(writer, 1, "one", [[assistant(("a", "Read")), result("a", "A" * 50)]])
    summary = [Message.user("one\n\n<system>the summary</system>")]
    writer.replaced(summary, reason="compacted")
    write_turn(writer, 2, "two", [[assistant(text="after")]])
    writer.close()

    restored = load_transcript(path)
    assert [m.text for m in restored.messages] == [summary[0].text, "two", "after"]
    assert (restored.turns, restored.steps) == (2, 2)
    assert restored.usage.input_tokens == 2000  # usage is every step's, compacted or not
    assert restored.last_prompt_tokens == 1000
    assert restored.prompt_covered == 2  # the request held the summary and the prompt


def test_a_clear_restores_nothing_before_it(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    write_turn(writer, 1, "one", [[assistant(text="x")]])
    writer.replaced([], reason="clear")
    writer.close()
    restored = load_transcript(path)
    assert restored.messages == [] and restored.last_prompt_tokens == 0


def test_an_elision_is_written_as_a_patch_of_the_changed_messages_only(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    steps = [
        [assistant((f"c{i}", "Read")), result(f"c{i}", f"output {i} " * 100)] for i in range(6)
    ]
    write_turn(writer, 1, "go", steps)
    history = [Message.user("go"), *(m for step in steps for m in step)]
    elided = list(history)
    elided[2] = result("c0", "pointer to c0")
    elided[4] = result("c1", "pointer to c1")
    writer.replaced(elided, reason="elided")
    writer.close()

    last = records(path)[-1]
    assert last["type"] == "patch" and [c["index"] for c in last["changes"]] == [2, 4]
    assert load_transcript(path).messages == elided


def test_a_writer_of_an_existing_file_writes_its_first_rewrite_whole(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    first = TranscriptWriter(path)
    write_turn(first, 1, "go", [[assistant(("a", "Read")), result("a", "long " * 200)]])
    first.close()
    history = load_transcript(path).messages

    resumed = TranscriptWriter(path)
    history[2] = result("a", "pointer")
    resumed.replaced(history, reason="elided")
    resumed.close()
    assert records(path)[-1]["type"] == "replaced"
    assert load_transcript(path).messages == history


def test_the_prompt_is_restored_when_the_loop_records_no_user_message(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    writer.turn_started(1, "only in turn_start")
    writer.message(assistant(text="answer"), turn=1, step=1)
    writer.turn_ended(turn=1, stop_reason="end_turn", steps=1, usage=Usage())
    writer.turn_started(2, "a turn that crashed before any reply")
    writer.close()
    restored = load_transcript(path)
    assert [m.text for m in restored.messages] == [
        "only in turn_start",
        "answer",
        "a turn that crashed before any reply",
    ]


def test_a_missing_file_restores_an_empty_history(tmp_path: Path) -> None:
    restored = load_transcript(tmp_path / "nope.jsonl")
    assert restored.messages == [] and restored.turns == 0


def test_garbage_lines_and_unknown_records_are_skipped(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "main")
    writer = TranscriptWriter(path)
    write_turn(writer, 1, "go", [[assistant(text="a")]])
    writer.close()
    with open(path, "a") as handle:
        handle.write('[1, 2]\n{"v": 2, "type": "from_the_future"}\n{"v": 1, "type": "message"}\n')
    restored = load_transcript(path)
    assert [m.text for m in restored.messages] == ["go", "a"]
    assert restored.skipped == 2  # the list and the message without one; the future is ignored


def test_a_writer_that_cannot_write_says_why_and_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    writer = TranscriptWriter(blocker / "transcripts" / "main.jsonl")
    writer.turn_started(1, "go")
    writer.message(Message.user("go"), turn=1, step=0)
    writer.close()
    assert writer.error is not None and "cannot be written" in writer.error


def test_latest_session_is_the_one_whose_transcript_changed_last(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    assert latest_session(workspace) is None
    now = time.time()
    for name, age in (("20260101-000000-aaaaaa", 300), ("20260102-000000-bbbbbb", 100)):
        path = transcript_path(session_dir(workspace, name), "main")
        writer = TranscriptWriter(path)
        write_turn(writer, 1, name, [[assistant(text="x")]])
        writer.close()
        os.utime(path, (now - age, now - age))
    # newer sessions without a main transcript, with an empty one, or being pruned
    (session_dir(workspace, "20260103-000000-cccccc") / "spill").mkdir(parents=True)
    empty = transcript_path(session_dir(workspace, "20260104-000000-dddddd"), "main")
    empty.parent.mkdir(parents=True)
    empty.touch()
    child = transcript_path(session_dir(workspace, "20260105-000000-eeeeee"), "main/child")
    TranscriptWriter(child).turn_started(1, "x")
    pruning = session_dir(workspace, ".pruning-x") / "transcripts"
    pruning.mkdir(parents=True)
    (pruning / "main.jsonl").write_text("{}\n")

    assert latest_session(workspace) == "20260102-000000-bbbbbb"
    assert latest_session(workspace, data_home()) == "20260102-000000-bbbbbb"
    assert latest_session(workspace, agent_id="main/child") == "20260105-000000-eeeeee"
    old = transcript_path(session_dir(workspace, "20260101-000000-aaaaaa"), "main")
    os.utime(old, (now, now))
    assert latest_session(workspace) == "20260101-000000-aaaaaa"
    other = tmp_path / "other"
    other.mkdir()
    assert latest_session(other) is None


def test_two_processes_appending_at_once_never_interleave_their_lines(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = transcript_path(tmp_path, "main")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from deftly.agent.transcript import TranscriptWriter\n"
        "from deftly.providers.types import Message\n"
        "w = TranscriptWriter(Path(sys.argv[1]))\n"
        "for i in range(150):\n"
        "    w.message(Message.user(sys.argv[2] * 70_000 + str(i)), turn=1, step=i)\n"
        "w.close()\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(path), mark]) for mark in ("a", "b")
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    restored = load_transcript(path)
    assert restored.skipped == 0
    assert len(restored.messages) == 300
    for mark in "ab":
        mine = [m.text for m in restored.messages if m.text.startswith(mark)]
        assert mine == [mark * 70_000 + str(i) for i in range(150)]
