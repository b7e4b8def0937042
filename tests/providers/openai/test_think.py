"""Reasoning inside the text (`<think>` blocks, Mistral's thinking parts) comes out as
reasoning, however the stream is cut."""

from __future__ import annotations

import itertools

import pytest

from deftly.providers import ProviderError, ReasoningDelta, TextDelta, collect
from deftly.providers.openai_think import ThinkSplitter, content_pieces
from tests.providers.openai.helpers import parts, provider, request
from tests.scripted.script import Call, Fail, Reply, Say, say
from tests.scripted.server import ModelServer


def _split(text: str, cuts: list[int]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    pieces = []
    bounds = [0, *cuts, len(text)]
    for start, end in itertools.pairwise(bounds):
        pieces += splitter.feed(text[start:end])
    pieces += splitter.flush()
    think = "".join(t for k, t in pieces if k == "think")
    plain = "".join(t for k, t in pieces if k == "text")
    return think, plain


@pytest.mark.parametrize(
    ("text", "think", "plain"),
    [
        ("<think>plan it</think>\n\nThe answer.", "plan it", "The answer."),
        ("\n<think>\nx\n</think>answer", "\nx\n", "answer"),
        ("No tags here.", "", "No tags here."),
        ("Text first <think>not reasoning</think>", "", "Text first <think>not reasoning</think>"),
        ("<think>cut off", "cut off", ""),
        ("<thi", "", "<thi"),
        ("<think></think>", "", ""),
        ("< think>", "", "< think>"),
    ],
)
def test_every_way_of_cutting_the_stream_gives_the_same_split(
    text: str, think: str, plain: str
) -> None:
    for a in range(len(text) + 1):
        for b in range(a, len(text) + 1):
            assert _split(text, [a, b]) == (think, plain), (a, b)


def test_no_fragment_of_a_tag_is_ever_yielded() -> None:
    splitter = ThinkSplitter()
    seen = []
    for char in "<think>ab</think>cd":
        seen += splitter.feed(char)
    assert all("<" not in t and ">" not in t for _, t in seen)


def test_mistral_thinking_parts() -> None:
    content = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
        {"type": "text", "text": "answer"},
    ]
    assert content_pieces(content) == [("think", "hmm"), ("text", "answer")]
    assert content_pieces(None) == [] and content_pieces("x") == [("text", "x")]


async def test_a_streamed_think_block_becomes_reasoning() -> None:
    script = [Reply((Say("<think>I will read it</think>\n\nReading."), Call("Read")), chunk=3)]
    with ModelServer(script) as server:
        got = await parts(server)
    assert "".join(p.text for p in got if isinstance(p, ReasoningDelta)) == "I will read it"
    assert "".join(p.text for p in got if isinstance(p, TextDelta)) == "Reading."


async def test_a_whole_reply_with_a_think_block() -> None:
    with ModelServer([say("<think>short</think>Done.")]) as server:
        chat = provider(server, stream=False)
        reply = await collect(chat.stream(request()))
        await chat.aclose()
    assert [p.type for p in reply.message.parts] == ["think", "text"]
    assert reply.message.text == "Done."


async def test_a_reply_that_only_thinks_is_empty() -> None:
    script = [say("<think>nothing to say</think>  ")]
    with ModelServer(script) as server, pytest.raises(ProviderError) as caught:
        await parts(server)
    assert caught.value.kind == "empty"


async def test_mistral_content_parts_in_a_whole_reply() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
                        {"type": "text", "text": "answer"},
                    ],
                },
                "finish_reason": "stop",
            }
        ]
    }
    with ModelServer([Fail(200, body)]) as server:
        chat = provider(server, stream=False)
        reply = await collect(chat.stream(request()))
        await chat.aclose()
    assert reply.message.text == "answer"
    assert reply.message.parts[0].text == "hmm"
