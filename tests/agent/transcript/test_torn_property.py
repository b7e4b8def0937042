"""A transcript cut at any byte (a crash at any moment) still loads, into a paired
history that is what was recorded up to the cut."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.agent.transcript import TranscriptWriter, load_transcript, transcript_path
from deftly.providers.types import Message, TextPart, ToolCallRequest, Usage
from tests.agent.context.histories import assert_paired

steps = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 300), st.booleans()),  # calls, size, rewrite
    min_size=1,
    max_size=12,
)


def record(path: Path, shapes: list[tuple[int, int, bool]]) -> list[Message]:
    writer = TranscriptWriter(path)
    history: list[Message] = []
    writer.turn_started(1, "go")
    writer.message(Message.user("go"), turn=1, step=0)
    history.append(Message.user("go"))
    for number, (calls, size, rewrite) in enumerate(shapes, 1):
        ids = [f"c{number}_{n}" for n in range(calls)]
        reply = Message(
            "assistant",
            (TextPart(f"step {number} é"),),
            tool_calls=tuple(ToolCallRequest(i, "Read", '{"path": "ü.txt"}') for i in ids),
        )
        writer.message(reply, turn=1, step=number)
        history.append(reply)
        for call_id in ids:
            result = Message("tool", (TextPart("r" * size),), tool_call_id=call_id, name="Read")
            writer.message(result, turn=1, step=number)
            history.append(result)
        writer.step_ended(turn=1, step=number, usage=Usage(10, 1), finish_reason="tool_calls")
        tools = [i for i, m in enumerate(history) if m.role == "tool" and m.text != "pointer"]
        if rewrite and tools:  # an elision of the oldest output left
            old = history[tools[0]]
            history[tools[0]] = Message(
                "tool", (TextPart("pointer"),), tool_call_id=old.tool_call_id, name=old.name
            )
            writer.replaced(list(history), reason="elided")
    writer.close()
    return history


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=steps, cut=st.floats(0, 1))
def test_a_transcript_cut_anywhere_loads_paired(
    shapes: list[tuple[int, int, bool]], cut: float
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = transcript_path(Path(folder), "main")
        history = record(path, shapes)
        whole = load_transcript(path)
        assert whole.messages == history and whole.skipped == 0

        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * cut)])
        torn = load_transcript(path)
        assert torn.skipped <= 1
        assert_paired(torn.messages)
        assert torn.steps <= whole.steps
        if torn.messages:
            assert torn.messages[0] == Message.user("go")
