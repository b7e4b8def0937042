"""Streamed (and whole) replies from the real `openai` SDK against the scripted server:
text, reasoning, tool calls over many chunks, and every quirk real servers have."""

from __future__ import annotations

import threading

import pytest

from deftly.providers import (
    Finish,
    Message,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    Usage,
    UsageReport,
    collect,
)
from deftly.providers.openai_decode import usage_of
from tests.providers.openai.helpers import kinds, parts, provider, request
from tests.scripted.script import Call, Fail, Reply, Say, Think, calls, say
from tests.scripted.server import ModelServer

STREAMED = pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])


def _calls(items: list[object]) -> list[ToolCallRequest]:
    return [p.call for p in items if isinstance(p, ToolCallEnd)]


def _text(items: list[object]) -> str:
    return "".join(p.text for p in items if isinstance(p, TextDelta))


@STREAMED
async def test_text_reasoning_and_two_calls_come_back_whole(stream: bool) -> None:
    script = [
        Reply(
            (
                Think("let me look"),
                Say("Reading both."),
                Call("Read", {"path": "a.txt"}),
                Call("Read", {"path": "b.txt"}),
            ),
            chunk=3,
            usage=(120, 30),
        )
    ]
    with ModelServer(script) as server:
        got = await parts(server, stream=stream)
    assert "".join(p.text for p in got if isinstance(p, ReasoningDelta)) == "let me look"
    assert _text(got) == "Reading both."
    assert _calls(got) == [
        ToolCallRequest("call_0_0", "Read", '{"path": "a.txt"}'),
        ToolCallRequest("call_0_1", "Read", '{"path": "b.txt"}'),
    ]
    assert got[-2:] == [UsageReport(Usage(120, 30)), Finish("tool_calls", "tool_calls")]


async def test_a_call_ends_before_the_next_calls_deltas_are_read() -> None:
    script = [calls(Call("Read", {"path": "a.txt"}), Call("Read", {"path": "b" * 40}), chunk=4)]
    with ModelServer(script) as server:
        got = await parts(server)
    end0 = got.index(next(p for p in got if isinstance(p, ToolCallEnd) and p.index == 0))
    start1 = got.index(next(p for p in got if isinstance(p, ToolCallStart) and p.index == 1))
    deltas1 = [i for i, p in enumerate(got) if isinstance(p, ToolCallDelta) and p.index == 1]
    assert end0 < start1 < deltas1[0]
    assert len(deltas1) > 5  # call 1 really streamed in many pieces after call 0 ended


class _Gate(threading.Event):
    """A gate that gives up after a few seconds and remembers whether it had to."""

    timed_out = False

    def wait(self, timeout: float | None = None) -> bool:
        opened = super().wait(5)
        self.timed_out = self.timed_out or not opened
        return opened


async def test_the_end_of_call_zero_is_yielded_while_the_server_still_streams() -> None:
    gate = _Gate()  # the server holds its finish chunk until the gate opens
    script = [calls(Call("Read", {"path": "a.txt"}), Call("Read", {"path": "b.txt"}), gate=gate)]
    with ModelServer(script) as server:
        chat = provider(server)
        ended: list[int] = []
        async for part in chat.stream(request()):
            if isinstance(part, ToolCallEnd):
                ended.append(part.index)
                gate.set()
        await chat.aclose()
    assert ended == [0, 1]
    assert not gate.timed_out  # call 0 ended before the server sent its finish


async def test_text_after_a_call_ends_it() -> None:
    script = [Reply((Call("Read", {"path": "a"}), Say("and more")))]
    with ModelServer(script) as server:
        got = await parts(server)
    end = next(i for i, p in enumerate(got) if isinstance(p, ToolCallEnd))
    text = next(i for i, p in enumerate(got) if isinstance(p, TextDelta))
    assert end < text


@STREAMED
@pytest.mark.parametrize(
    "quirk",
    [
        "repeat_id_name",
        "whole_arguments",
        "no_role",
        "usage_final_chunk",
        "usage_in_every_chunk",
        "reasoning_field",
        "missing_index",
        "missing_index repeat_id_name",
        "missing_index missing_ids repeat_id_name",
        "missing_index missing_ids whole_arguments",
        "no_role usage_in_every_chunk reasoning_field repeat_id_name",
    ],
)
async def test_server_quirks_give_the_same_reply(quirk: str, stream: bool) -> None:
    script = [
        Reply(
            (Think("hmm"), Say("ok"), Call("Read", {"path": "a.txt"}), Call("Grep", {"q": "x"})),
            chunk=5,
            usage=(50, 7),
            quirks=frozenset(quirk.split()),
        )
    ]
    with ModelServer(script) as server:
        chat = provider(server, stream=stream)
        reply = await collect(chat.stream(request()))
        await chat.aclose()
    assert reply.message.text == "ok"
    assert [(c.name, c.arguments) for c in reply.message.tool_calls] == [
        ("Read", '{"path": "a.txt"}'),
        ("Grep", '{"q": "x"}'),
    ]
    ids = [c.id for c in reply.message.tool_calls]
    assert ids == (["call_0", "call_1"] if "missing_ids" in quirk else ["call_0_0", "call_0_1"])
    assert reply.usage == Usage(50, 7)
    assert reply.message.parts[0].text == "hmm"


@STREAMED
async def test_missing_and_repeated_ids_are_made_unique_in_the_conversation(stream: bool) -> None:
    earlier = Message("assistant", tool_calls=(ToolCallRequest("call_0", "Read", "{}"),))
    history = [Message.user("hi"), earlier, Message("tool", tool_call_id="call_0")]
    script = [
        calls(Call("Read", {"path": "a"}), Call("Read", {"path": "b"}), quirks=frozenset({q}))
        for q in ("same_id", "missing_ids")
    ]
    with ModelServer(script) as server:
        same = _calls(await parts(server, request(*history), stream=stream))
        history += [Message("assistant", tool_calls=tuple(same))]
        history += [Message("tool", tool_call_id=c.id) for c in same]
        missing = _calls(await parts(server, request(*history), stream=stream))
    ids = [c.id for c in same + missing]
    assert "call_0" not in ids and len(set(ids)) == 4
    assert all(ids)


@STREAMED
async def test_usage_absent_gives_no_usage_report(stream: bool) -> None:
    with ModelServer([say("hello", usage=None)]) as server:
        got = await parts(server, stream=stream)
    assert kinds(got)[-1] == "Finish" and "UsageReport" not in kinds(got)
    assert _text(got) == "hello"


@STREAMED
async def test_empty_arguments_become_an_empty_object(stream: bool) -> None:
    with ModelServer([calls(Call("Now", ""))]) as server:
        got = await parts(server, stream=stream)
    assert _calls(got) == [ToolCallRequest("call_0_0", "Now", "{}")]


async def test_malformed_arguments_are_passed_on_exactly_as_streamed() -> None:
    with ModelServer([calls(Call("Read", '{"path": "a'))]) as server:
        got = await parts(server)
    assert _calls(got)[0].arguments == '{"path": "a'


@STREAMED
@pytest.mark.parametrize(
    ("wire", "reason"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "filtered")],
)
async def test_finish_reasons_are_mapped(stream: bool, wire: str, reason: str) -> None:
    with ModelServer([say("partial", finish=wire)]) as server:
        got = await parts(server, stream=stream)
    assert got[-1] == Finish(reason, wire)  # type: ignore[arg-type]


async def test_stop_after_tool_calls_still_means_tool_calls() -> None:
    with ModelServer([calls(Call("Read", {"path": "a"}), finish="stop")]) as server:
        got = await parts(server)
    assert got[-1] == Finish("tool_calls", "stop")


@pytest.mark.parametrize("quirks", ["missing_index missing_ids", "missing_index repeat_id_name"])
async def test_two_calls_of_one_tool_without_index_stay_apart(quirks: str) -> None:
    script = [
        calls(
            Call("Read", {"path": "a.txt"}),
            Call("Read", {"path": "b.txt"}),
            chunk=3,
            quirks=frozenset(quirks.split()),
        )
    ]
    with ModelServer(script) as server:
        got = await parts(server)
    assert [c.arguments for c in _calls(got)] == ['{"path": "a.txt"}', '{"path": "b.txt"}']


async def test_cached_prompt_tokens_are_read_as_each_server_reports_them() -> None:
    openai = {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 8},
    }
    deepseek = {"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 6}
    kimi = {"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 4}
    assert usage_of(openai) == Usage(10, 2, cache_read_tokens=8)
    assert usage_of(deepseek) == Usage(10, 2, cache_read_tokens=6)
    assert usage_of(kimi) == Usage(10, 2, cache_read_tokens=4)
    assert usage_of(None) is None


async def test_a_json_answer_to_a_streamed_request_says_to_turn_streaming_off() -> None:
    with (
        ModelServer([Fail(200, {"choices": []})]) as server,
        pytest.raises(ProviderError) as caught,
    ):
        await parts(server)
    assert caught.value.kind == "stream" and "stream = false" in caught.value.message


async def test_a_consumer_that_stops_early_leaves_nothing_open() -> None:
    script = [calls(Call("Read", {"path": "a" * 200}), chunk=2), say("again")]
    with ModelServer(script) as server:
        chat = provider(server)
        stream = chat.stream(request())
        async for part in stream:
            if isinstance(part, ToolCallStart):
                break
        await stream.aclose()  # type: ignore[attr-defined]
        again = await collect(chat.stream(request()))
        await chat.aclose()
    assert again.message.text == "again"
