"""The Anthropic provider's replies, streamed and not, through the real SDK against the
scripted server: text, tool calls, thinking, usage, finish reasons."""

from __future__ import annotations

import json

import pytest

from deftly.providers import (
    AnthropicProvider,
    ChatProvider,
    ChatRequest,
    Finish,
    Message,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    TextPart,
    ThinkPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    Usage,
    UsageReport,
    collect,
)
from deftly.providers import Reply as ProviderReply
from tests.providers.anthropic.helpers import kinds, parts, provider, reply, request
from tests.scripted.script import Call, Reply, Say, Think, calls, say
from tests.scripted.server import ModelServer

LONG = "The quick brown fox jumps over the lazy dog. " * 6


def test_is_a_chat_provider() -> None:
    with ModelServer() as server:
        chat = provider(server)
        assert isinstance(chat, ChatProvider)
        assert chat.name == "anthropic"
        assert chat.model == "scripted"
        assert chat.capabilities.images_in_tool_results
        assert not provider(
            server, images_in_tool_results=False
        ).capabilities.images_in_tool_results


async def test_text_streamed_in_many_chunks() -> None:
    with ModelServer([say(LONG, chunk=5)]) as server:
        got = await parts(server)
    deltas = [p.text for p in got if isinstance(p, TextDelta)]
    assert len(deltas) > 20
    assert "".join(deltas) == LONG
    assert got[-1] == Finish("end_turn", "end_turn")
    assert isinstance(got[-2], UsageReport)
    assert server.requests[0]["stream"] is True
    sent = server.headers[0]
    assert sent.get("x-api-key") == "k" or sent.get("authorization") == "Bearer k"


async def test_a_tool_call_whose_json_spans_many_chunks() -> None:
    arguments = {"path": "src/deep/module/file.py", "note": "ünïcode " * 5}
    with ModelServer([calls(Call("Read", arguments, id="toolu_abc"), chunk=3)]) as server:
        got = await parts(server)
    assert kinds(got)[0] == "ToolCallStart"
    assert got[0] == ToolCallStart(0, "toolu_abc", "Read")
    pieces = [p.arguments for p in got if isinstance(p, ToolCallDelta)]
    assert len(pieces) > 10
    end = next(p for p in got if isinstance(p, ToolCallEnd))
    assert end.call == ToolCallRequest("toolu_abc", "Read", "".join(pieces))
    assert json.loads(end.call.arguments) == arguments
    assert got[-1] == Finish("tool_calls", "tool_use")


async def test_several_calls_in_one_reply_end_one_by_one() -> None:
    script = [
        Reply(
            (
                Say("Reading both."),
                Call("Read", {"path": "a"}),
                Call("Read", {"path": "b"}),
                Call("Write", {}),
            ),
            chunk=4,
        )
    ]
    with ModelServer(script) as server:
        got = await parts(server)
    starts = [p for p in got if isinstance(p, ToolCallStart)]
    ends = [p for p in got if isinstance(p, ToolCallEnd)]
    assert [s.index for s in starts] == [0, 1, 2]
    assert [e.call.name for e in ends] == ["Read", "Read", "Write"]
    assert len({e.call.id for e in ends}) == 3
    assert ends[2].call.arguments == "{}"
    # call 0 ends before call 1 starts: the loop can dispatch it while the rest streams
    order = kinds(got)
    assert got.index(ends[0]) < got.index(starts[1])
    assert order.index("TextDelta") < order.index("ToolCallStart")


async def test_ids_stay_unique_in_the_conversation() -> None:
    earlier = Message("assistant", (), (ToolCallRequest("toolu_x", "Read", "{}"),))
    history = [
        Message.user("hi"),
        earlier,
        Message("tool", (TextPart("a"),), tool_call_id="toolu_x"),
    ]
    with ModelServer([calls(Call("Read", {}, id="toolu_x"))]) as server:
        got = await parts(server, request(*history))
    start = next(p for p in got if isinstance(p, ToolCallStart))
    assert start.id != "toolu_x"
    assert start.id.startswith("toolu_x")


async def test_thinking_is_kept_with_its_signature() -> None:
    script = [Reply((Think("Let me think about it.", signature="sig-A"), Say("Done.")), chunk=4)]
    with ModelServer(script) as server:
        got = await parts(server)
    reasoning = [p for p in got if isinstance(p, ReasoningDelta)]
    assert "".join(r.text for r in reasoning) == "Let me think about it."
    assert reasoning[-1] == ReasoningDelta("", signature="sig-A")
    assert kinds(got).index("ReasoningDelta") < kinds(got).index("TextDelta")


async def test_the_reply_folds_into_signed_think_parts() -> None:
    script = [Reply((Think("hmm", signature="sig-A"), Say("ok"), Call("Read", {"path": "a"})))]
    with ModelServer(script) as server:
        got = await reply(server)
    assert got.message.parts == (ThinkPart("hmm", "sig-A"), TextPart("ok"))
    assert got.message.tool_calls[0].name == "Read"
    assert got.finish == "tool_calls"


async def test_redacted_thinking_is_kept() -> None:
    script = [Reply((Think("ENCRYPTED=="), Say("ok")), quirks=frozenset({"redacted"}))]
    with ModelServer(script) as server:
        got = await reply(server)
    assert got.message.parts == (ThinkPart("", None, "ENCRYPTED=="), TextPart("ok"))


async def test_thinking_and_its_signature_go_back_on_the_tool_use_continuation() -> None:
    script = [
        Reply((Think("plan: read a", signature="sig-1"), Call("Read", {"path": "a"}))),
        say("a holds 1"),
    ]
    with ModelServer(script) as server:
        chat = provider(server, reasoning_effort="low")
        try:
            first = await _collect(chat, request(Message.user("what is in a?")))
            history = [
                Message.user("what is in a?"),
                first.message,
                Message("tool", (TextPart("1"),), tool_call_id=first.message.tool_calls[0].id),
            ]
            await _collect(chat, request(*history))
        finally:
            await chat.aclose()
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in server.requests[0]
    second = server.requests[1]
    assert second["thinking"]["type"] == "enabled"
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "plan: read a",
        "signature": "sig-1",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    assert assistant["content"][1]["input"] == {"path": "a"}


async def test_a_continuation_without_thinking_is_sent_with_thinking_off() -> None:
    history = [
        Message.user("go"),
        Message("assistant", (), (ToolCallRequest("toolu_1", "Read", "{}"),)),
        Message("tool", (TextPart("1"),), tool_call_id="toolu_1"),
    ]
    with ModelServer([say("ok")]) as server:
        await parts(server, request(*history), reasoning_effort="high")
    assert "thinking" not in server.requests[0]


def test_reasoning_effort_maps_to_a_budget() -> None:
    with ModelServer() as server:
        chat = provider(server, max_output_tokens=1000)
        body = chat.params(request(reasoning_effort="medium"), streaming=True)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
        assert body["max_tokens"] == 1000 + 8192
        assert "thinking" not in chat.params(request(reasoning_effort="none"), streaming=True)
        assert (
            chat.params(request(reasoning_effort="4000"), streaming=True)["thinking"][
                "budget_tokens"
            ]
            == 4000
        )
        plain = chat.params(request(temperature=0.2), streaming=False)
        assert plain["max_tokens"] == 1000
        assert plain["extra_body"] == {"temperature": 0.2}
        assert "stream" not in plain


async def test_a_temperature_reaches_the_server() -> None:
    with ModelServer([say("warm")]) as server:
        chat = AnthropicProvider(
            model="m", base_url=server.anthropic_url, api_key="k", temperature=0.3
        )
        reply = await collect(chat.stream(ChatRequest("s", [Message.user("x")])))
        await chat.aclose()
    assert reply.message.text == "warm" and server.requests[0]["temperature"] == 0.3


async def test_an_unknown_reasoning_effort_is_a_clear_error() -> None:
    with ModelServer([say("never")]) as server, pytest.raises(ProviderError) as caught:
        await parts(server, reasoning_effort="ludicrous")
    assert caught.value.kind == "bad_request"
    assert "low, medium, high" in caught.value.message.replace("minimal, ", "")
    assert server.requests == []


async def test_non_streaming_mode_yields_the_same_parts() -> None:
    script = [
        Reply(
            (
                Think("why", signature="sig-W"),
                Say("Reading."),
                Call("Read", {"path": "a"}, id="toolu_q"),
                Call("Write", {}),
            )
        )
    ]
    with ModelServer(script) as server:
        got = await parts(server, stream=False)
    assert "stream" not in server.requests[0]
    assert kinds(got) == [
        "ReasoningDelta",
        "ReasoningDelta",
        "TextDelta",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallEnd",
        "ToolCallStart",
        "ToolCallEnd",
        "UsageReport",
        "Finish",
    ]
    assert got[1] == ReasoningDelta("", signature="sig-W")
    ends = [p for p in got if isinstance(p, ToolCallEnd)]
    assert ends[0].call == ToolCallRequest("toolu_q", "Read", '{"path": "a"}')
    assert ends[1].call.arguments == "{}"
    assert got[-1] == Finish("tool_calls", "tool_use")


@pytest.mark.parametrize("stream", [True, False])
async def test_usage_counts_cached_prompt_tokens(stream: bool) -> None:
    quirks = frozenset({"cache_read=700", "cache_write=50"})
    with ModelServer([say("ok", usage=(30, 12), quirks=quirks)]) as server:
        got = await parts(server, stream=stream)
    usage = next(p.usage for p in got if isinstance(p, UsageReport))
    assert usage == Usage(
        input_tokens=780, output_tokens=12, cache_read_tokens=700, cache_write_tokens=50
    )


async def test_usage_repeated_in_message_delta_is_not_double_counted() -> None:
    quirks = frozenset({"cache_read=10", "usage_in_delta"})
    with ModelServer([say("ok", usage=(5, 7), quirks=quirks)]) as server:
        got = await parts(server)
    assert [p.usage for p in got if isinstance(p, UsageReport)] == [
        Usage(input_tokens=15, output_tokens=7, cache_read_tokens=10)
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "filtered"),
        ("pause_turn", "other"),
    ],
)
async def test_finish_reasons(raw: str, reason: str) -> None:
    with ModelServer([say("partial", finish=raw)]) as server:
        got = await parts(server)
    assert got[-1] == Finish(reason, raw)  # type: ignore[arg-type]


async def test_a_refusal_with_no_text_is_not_an_empty_reply() -> None:
    with ModelServer([Reply((), finish="refusal")]) as server:
        got = await parts(server)
    assert got[-1] == Finish("filtered", "refusal")


async def _collect(chat: AnthropicProvider, req: ChatRequest) -> ProviderReply:
    return await collect(chat.stream(req))


async def test_non_streaming_with_a_large_output_limit_is_not_refused_by_the_sdk() -> None:
    # the SDK refuses non-streamed requests it expects to take over 10 minutes, unless
    # a timeout is set: the provider always sets one
    with ModelServer([say("ok")]) as server:
        got = await parts(server, stream=False, max_output_tokens=64000)
    assert server.requests[0]["max_tokens"] == 64000
    assert got[-1] == Finish("end_turn", "end_turn")


async def test_extra_headers_are_sent() -> None:
    with ModelServer([say("ok")]) as server:
        await parts(server, headers={"anthropic-beta": "interleaved-thinking-2025-05-14"})
    assert server.headers[0]["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_a_stream_left_early_frees_the_connection_for_the_next_request() -> None:
    with ModelServer([say("x" * 400, chunk=4), say("second")]) as server:
        chat = provider(server)
        try:
            stream = chat.stream(request())
            async for part in stream:
                if isinstance(part, TextDelta):
                    break
            await stream.aclose()  # type: ignore[attr-defined]
            got = [part async for part in chat.stream(request())]
        finally:
            await chat.aclose()
    assert [p.text for p in got if isinstance(p, TextDelta)] == ["second"]
