"""Through a real `Agent` against the scripted server: compaction triggered by a small
configured window, and a session resumed from its transcript."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.agent.context_compact import SUMMARY_SYSTEM
from deftly.agent.transcript import (
    INTERRUPTED,
    TranscriptWriter,
    load_transcript,
    transcript_path,
)
from deftly.providers.types import Message, TextPart, ToolCallRequest, Usage
from deftly.session.paths import session_dir
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.scripted.script import Call, Step, calls, say
from tests.scripted.server import ModelServer

SUMMARY = "SUMMARY: read a.txt and b.txt; c.txt is next; nothing is broken."


def is_summary_request(body: dict[str, Any]) -> bool:
    first = body["messages"][0]
    return first["role"] == "system" and first["content"] == SUMMARY_SYSTEM


def scripted(steps: list[Step]) -> Any:
    """The steps in order for the loop's requests; the summary for a compaction's."""
    queue: Iterator[Step] = iter(steps)

    def answer(body: dict[str, Any]) -> Step:
        if is_summary_request(body):
            return say(SUMMARY)
        return next(queue)

    return answer


def texts(body: dict[str, Any]) -> list[str]:
    return [content_text(m) for m in body["messages"]]


async def test_a_small_window_compacts_and_the_next_request_carries_the_summary(
    make_runtime: Any, workspace: Path
) -> None:
    for name in "abc":
        (workspace / f"{name}.txt").write_text(f"contents of {name}\n")
    runtime = await make_runtime(config={"loop": {"keep_recent_steps": 1}})
    steps: list[Step] = [
        # the prompt the server saw grows with each request (its reported usage)
        calls(Call("Read", {"path": str(workspace / "a.txt")}), usage=(2_000, 20)),
        calls(Call("Read", {"path": str(workspace / "b.txt")}), usage=(4_000, 20)),
        calls(Call("Read", {"path": str(workspace / "c.txt")}), usage=(9_000, 20)),
        say("All three read."),
    ]
    with ModelServer(scripted(steps)) as server:
        agent = Agent(runtime, openai_provider(server), context_window=10_000)
        turn = await run_turn(agent, "read a, b and c")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn" and turn.end.text == "All three read."

    (changed,) = turn.of(ev.ContextChanged)
    assert changed.kind == "compacted" and changed.tokens_before > 8_500
    assert "compacted" in changed.detail

    summary_requests = [b for b in server.requests if is_summary_request(b)]
    assert len(summary_requests) == 1
    assert "contents of a" in content_text(summary_requests[0]["messages"][-1])

    after = server.requests[-1]  # the request that followed the compaction
    assert not is_summary_request(after)
    sent = texts(after)
    assert any(SUMMARY in t and "read a, b and c" in t for t in sent)
    assert not any("contents of a" in t or "contents of b" in t for t in sent)  # old steps gone
    assert any("contents of c" in t for t in sent)  # the last step, verbatim
    tool_ids = [m["tool_call_id"] for m in after["messages"] if m["role"] == "tool"]
    assert len(tool_ids) == 1  # one call, one result: still paired

    # the transcript resumes from the compacted history
    restored = load_transcript(transcript_path(runtime.session_dir, "main"))
    assert SUMMARY in restored.messages[0].text
    assert restored.messages[-1].text == "All three read."
    assert restored.steps == 4 and restored.usage.input_tokens == 15_100


async def test_a_resumed_session_sends_the_restored_history(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    first = await make_runtime()
    session = first.session_id
    script = [
        calls(Call("Read", {"path": str(workspace / "notes.txt")})),
        say("It says 42."),
        say("You asked what the notes say; they say 42."),
    ]
    with ModelServer(script) as server:
        agent = Agent(first, openai_provider(server))
        await run_turn(agent, "what do the notes say?")
        await agent.aclose()
        await first.close()

        second = await make_runtime(session_id=session)
        resumed = Agent(second, openai_provider(server))
        turn = await run_turn(resumed, "what did I ask before?")
        await resumed.aclose()
    assert turn.end.session_id == session
    body = server.requests[-1]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    sent = texts(body)
    assert sent[1] == "what do the notes say?" and "the answer is 42" in sent[3]
    assert sent[4] == "It says 42." and sent[5] == "what did I ask before?"
    assert body["messages"][0] == server.requests[0]["messages"][0]  # the same system prompt

    restored = load_transcript(transcript_path(second.session_dir, "main"))
    assert restored.turns == 2 and restored.steps == 3


async def test_a_session_cut_mid_step_resumes_with_the_call_marked_interrupted(
    make_runtime: Any, workspace: Path
) -> None:
    session = "20260101-000000-abcdef"
    probe = await make_runtime(session_id=session)
    path = transcript_path(probe.session_dir, "main")
    await probe.close()
    writer = TranscriptWriter(path)
    writer.turn_started(1, "run the tests")
    writer.message(Message.user("run the tests"), turn=1, step=0)
    call = ToolCallRequest("call_9", "Bash", json.dumps({"command": "pytest -q"}))
    writer.message(Message("assistant", (TextPart("Running."),), (call,)), turn=1, step=1)
    writer.close()  # the process died while the command ran
    assert path.parent.parent == session_dir(workspace, session)

    runtime = await make_runtime(session_id=session)
    with ModelServer([say("I will run them again.")]) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "did they pass?")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    body = server.requests[0]
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_9" and INTERRUPTED in content_text(tool)
    assert body["messages"][-1] == {"role": "user", "content": "did they pass?"}


async def test_usage_is_recorded_for_every_step(make_runtime: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    runtime = await make_runtime()
    script = [
        calls(Call("Read", {"path": str(workspace / "a.txt")}), usage=(1_000, 10)),
        say("done", usage=(1_500, 5)),
    ]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "read a")
        await agent.aclose()
    restored = load_transcript(transcript_path(runtime.session_dir, "main"))
    assert restored.usage.input_tokens == 2_500 and restored.usage.output_tokens == 15
    assert restored.last_prompt_tokens == 1_500
    assert restored.usage == agent.usage == Usage(2_500, 15, 0, 0)


async def test_a_pointer_under_the_spill_folder_is_readable_by_the_read_tool_without_asking(
    make_runtime: Any,
) -> None:
    from deftly.agent.context import ContextKeeper
    from deftly.config.models import LoopConfig
    from tests.agent.context.histories import history

    runtime = await make_runtime(approve_asks=False)
    context = ContextKeeper(
        window=8_000,
        loop=LoopConfig(keep_recent_steps=3),
        elided_dir=runtime.session_dir / "spill" / "elided",
        elided_view=runtime.agent.session.spill_dir / "elided",
    )
    messages = history(8, 3_000)

    async def never(_request: object) -> str:
        raise AssertionError("eliding is enough here")

    fitted = await context.fit("system", messages, [], never)
    assert fitted.change == "elided"
    pointer = fitted.messages[2]
    read = await runtime.call("Read", {"path": pointer.meta["elided"]})
    assert not read.is_error, read.output
    assert "line 0.0: xxx" in str(read.output) and "end of 0.0" in str(read.output)
