"""Resuming a 2,000-step transcript, against `json.loads` of every line of it.

The transcript is written by the real `TranscriptWriter`: 100 turns of 20 steps, each step
an assistant message (300 characters of text, two tool calls) and two tool results (2 KB
and, every fifth step, 8 KB), its usage, and from the tenth turn on an elision every turn
(a `patch` record rewriting that turn's older outputs as pointers, as `ContextKeeper` does).
No compaction, so the whole history is restored: the worst case for the loader.

Floor, measured in the same run on the same file: read it and `json.loads` every line
(what any loader must do). Targets (issue 13): under 1 s and under 200 MB. Memory is the
peak RSS of a fresh process that loads the transcript, next to one that only imports the
module; and the Python heap's peak during the load (tracemalloc).

Also: what recording costs the loop, per record.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import best_of, clock, isolate, median_of, row
from deftly.agent.transcript import TranscriptWriter, load_transcript, transcript_path
from deftly.providers.types import Message, TextPart, ToolCallRequest, Usage

TURNS = 100
STEPS_PER_TURN = 20
TEXT = ("I will read the parser and its tests, then fix the off-by-one in the tokenizer. " * 4)[
    :300
]


def output(size: int, seed: int) -> str:
    line = f"{seed:6d}\tdef parse(tokens): return [t for t in tokens if t.strip()]  # {seed}\n"
    return (line * (size // len(line) + 1))[:size]


def write(path: Path) -> tuple[int, float]:
    """Write the transcript; returns how many records, and the seconds spent writing."""
    writer = TranscriptWriter(path)
    history: list[Message] = []
    records = 0
    spent = 0.0
    for turn in range(1, TURNS + 1):
        prompt = Message.user(f"Turn {turn}: go on with the fix and run the tests.")
        start = clock()
        writer.turn_started(turn, prompt.text)
        writer.message(prompt, turn=turn, step=0)
        spent += clock() - start
        history.append(prompt)
        records += 2
        total = Usage()
        for step in range(1, STEPS_PER_TURN + 1):
            n = (turn - 1) * STEPS_PER_TURN + step
            ids = (f"call_{n}_0", f"call_{n}_1")
            reply = Message(
                "assistant",
                (TextPart(TEXT),),
                tool_calls=(
                    ToolCallRequest(ids[0], "Read", json.dumps({"path": f"src/mod_{n}.py"})),
                    ToolCallRequest(ids[1], "Grep", json.dumps({"pattern": "def parse", "n": n})),
                ),
            )
            results = [
                Message("tool", (TextPart(output(2_000, n)),), tool_call_id=ids[0], name="Read"),
                Message(
                    "tool",
                    (TextPart(output(8_000 if n % 5 == 0 else 2_000, n + 1)),),
                    tool_call_id=ids[1],
                    name="Grep",
                ),
            ]
            usage = Usage(20_000 + 300 * n, 150, 18_000, 0)
            total += usage
            start = clock()
            for message in (reply, *results):
                writer.message(message, turn=turn, step=step)
            writer.step_ended(turn=turn, step=step, usage=usage, finish_reason="tool_calls")
            spent += clock() - start
            history += [reply, *results]
            records += 4
        if turn >= 10:  # elide the outputs of the turn before last, as the keeper would
            cut = len(history) - 2 * (1 + 3 * STEPS_PER_TURN)
            for index in range(max(cut - 3 * STEPS_PER_TURN, 0), cut):
                message = history[index]
                if message.role == "tool" and "elided" not in message.meta:
                    history[index] = Message(
                        "tool",
                        (
                            TextPart(
                                f"<system>elided: see elided/{message.tool_call_id}.txt</system>"
                            ),
                        ),
                        tool_call_id=message.tool_call_id,
                        name=message.name,
                        meta={"elided": f"elided/{message.tool_call_id}.txt"},
                    )
            start = clock()
            writer.replaced(history, reason="elided")
            spent += clock() - start
            records += 1
        start = clock()
        writer.turn_ended(turn=turn, stop_reason="end_turn", steps=STEPS_PER_TURN, usage=total)
        spent += clock() - start
        records += 1
    writer.close()
    return records, spent


def floor(path: Path) -> float:
    start = clock()
    with open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
    return clock() - start


def load(path: Path) -> float:
    start = clock()
    load_transcript(path)
    return clock() - start


PROBE = """
import resource, sys
sys.path.insert(0, {src!r})
from deftly.agent.transcript import load_transcript
if {load}:
    restored = load_transcript(__import__("pathlib").Path({path!r}))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss(path: Path, *, load: bool) -> float:
    """MB: the high-water RSS of a fresh process that (loads the transcript and) exits."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    code = PROBE.format(src=src, path=str(path), load=load)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def main() -> None:
    home = isolate()
    base = Path(tempfile.mkdtemp(prefix="deftly-bench-resume-"))
    try:
        path = transcript_path(base / "session", "main")
        records, spent = write(path)
        restored = load_transcript(path)
        steps = TURNS * STEPS_PER_TURN
        assert restored.steps == steps and restored.turns == TURNS, restored.steps
        assert len(restored.messages) == TURNS * (1 + 3 * STEPS_PER_TURN)
        assert restored.repaired == restored.skipped == 0
        size = path.stat().st_size

        bare = best_of(5, lambda: floor(path))
        best = best_of(5, lambda: load(path))
        median = median_of(5, lambda: load(path))
        tracemalloc.start()
        load_transcript(path)
        _, heap = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_floor = peak_rss(path, load=False)
        rss = peak_rss(path, load=True)

        print(
            f"resume: {steps:,} steps, {len(restored.messages):,} messages, {records:,} "
            f"records, {size / 1e6:.1f} MB of JSONL"
        )
        row("read + json.loads of every line (floor)", bare * 1e3, "ms")
        row("load_transcript (best of 5)", best * 1e3, "ms", bare * 1e3, "target < 1000 ms")
        row("load_transcript (median of 5)", median * 1e3, "ms", bare * 1e3)
        print("\nmemory")
        row("peak RSS: a process that only imports the module (floor)", rss_floor, "MB")
        row("peak RSS: a process that loads the transcript", rss, "MB", rss_floor, "< 200 MB")
        row("Python heap at its peak during the load (tracemalloc)", heap / 1e6, "MB")
        print("\nrecording")
        row("TranscriptWriter, per record (flushed)", spent / records * 1e6, "µs")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
