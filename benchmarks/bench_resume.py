"""Resuming a 2,000-step transcript, against `json.loads` of every line of it.

The transcript is written by the real `TranscriptWriter`: 100 turns of 20 steps, each step
an assistant message (300 characters of text, two tool calls) and two tool results (2 KB
and, every fifth step, 8 KB), its usage, and from the tenth turn on an elision every turn
(a `patch` record rewriting every output older than the last two turns as a pointer, as
`ContextKeeper` does). No compaction, so every message is restored. A second file without
any elision (every output kept whole) is the worst case for memory.

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


def write(path: Path, *, elide: bool = True) -> tuple[int, float]:
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
        if elide and turn >= 10:  # elide all but the last two turns' outputs, as the keeper would
            cut = len(history) - 2 * (1 + 3 * STEPS_PER_TURN)
            for index in range(cut):
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
count = 0
if {load}:
    count = len(load_transcript(__import__("pathlib").Path({path!r})).messages)
now = next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, now, count)
"""


def rss(path: Path, *, load: bool) -> tuple[float, float]:
    """MB: the high-water and the final RSS of a fresh process that (loads the transcript
    and) exits. The import's own peak may hide the load's: the final figure shows what the
    restored history holds."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    code = PROBE.format(src=src, path=str(path), load=load)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    peak, now, count = out.stdout.split()
    assert (int(count) > 0) == load, out.stdout
    return int(peak) / 1024, int(now) / 1024


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
        whole = transcript_path(base / "whole", "main")
        write(whole, elide=False)

        bare = best_of(5, lambda: floor(path))
        best = best_of(5, lambda: load(path))
        median = median_of(5, lambda: load(path))
        tracemalloc.start()
        load_transcript(path)
        _, heap = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_floor = rss(path, load=False)
        rss_loaded = rss(path, load=True)
        rss_whole = rss(whole, load=True)

        print(
            f"resume: {steps:,} steps, {len(restored.messages):,} messages, {records:,} "
            f"records, {size / 1e6:.1f} MB of JSONL"
        )
        row("read + json.loads of every line (floor)", bare * 1e3, "ms")
        row("load_transcript (best of 5)", best * 1e3, "ms", bare * 1e3, "target < 1000 ms")
        row("load_transcript (median of 5)", median * 1e3, "ms", bare * 1e3)
        whole_floor = best_of(5, lambda: floor(whole))
        whole_load = best_of(5, lambda: load(whole))
        row(
            f"without elision ({whole.stat().st_size / 1e6:.1f} MB): json.loads (floor)",
            whole_floor * 1e3,
            "ms",
        )
        row("without elision: load_transcript", whole_load * 1e3, "ms", whole_floor * 1e3)
        print("\nmemory")
        for label, figure in (("peak", 0), ("final", 1)):
            base_rss = rss_floor[figure]
            row(f"{label} RSS: a process that only imports the module (floor)", base_rss, "MB")
            row(
                f"{label} RSS: a process that loads the transcript",
                rss_loaded[figure],
                "MB",
                base_rss,
                "< 200 MB",
            )
            row(f"{label} RSS: the same, without elision", rss_whole[figure], "MB", base_rss)
        row("Python heap at its peak during the load (tracemalloc)", heap / 1e6, "MB")
        print("\nrecording")
        row("TranscriptWriter, per record (flushed)", spent / records * 1e6, "µs")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
