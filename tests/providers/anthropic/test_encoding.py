"""How neutral messages reach the Anthropic API: the request bodies the scripted server
recorded (tool results grouped, errors marked, images, system messages, merged user
turns, signed thinking) and where the prompt-cache breakpoints sit."""

from __future__ import annotations

import json
from typing import Any

from deftly.providers import (
    ImagePart,
    Message,
    TextPart,
    ThinkPart,
    ToolCallRequest,
    ToolSpec,
    collect,
)
from deftly.providers.anthropic_encode import encode_messages, encode_tools, tool_input
from tests.providers.anthropic.helpers import READ, WRITE, parts, provider, request
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

PNG = "iVBORw0KGgo="


def _calls(*ids: str) -> Message:
    return Message(
        "assistant",
        (TextPart("Looking."),),
        tuple(ToolCallRequest(i, "Read", json.dumps({"path": i})) for i in ids),
    )


def _result(call_id: str, text: str, **options: Any) -> Message:
    return Message("tool", (TextPart(text),), tool_call_id=call_id, **options)


async def _body(*messages: Message, **options: Any) -> dict[str, Any]:
    with ModelServer([say("ok")]) as server:
        await parts(server, request(*messages), **options)
    return server.requests[0]


def _cached(body: dict[str, Any]) -> list[str]:
    """Where `cache_control` sits: "system", "tool:NAME", "message:I:TYPE"."""
    found = [f"system:{i}" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    found += [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    for index, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [f"message:{index}:{b['type']}" for b in content if "cache_control" in b]
    return found


async def test_tool_results_of_one_turn_go_in_one_user_message_in_call_order() -> None:
    body = await _body(
        Message.user("read both"),
        _calls("toolu_a", "toolu_b"),
        _result("toolu_a", "A"),
        _result("toolu_b", "no such file", is_error=True),
        Message.user("and hurry"),
    )
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    results = messages[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in results[:2]] == ["toolu_a", "toolu_b"]
    assert results[0]["content"] == [{"type": "text", "text": "A"}]
    assert "is_error" not in results[0]
    assert results[1]["is_error"] is True
    assert results[2]["text"] == "and hurry"
    uses = messages[1]["content"]
    assert [b["type"] for b in uses] == ["text", "tool_use", "tool_use"]
    assert uses[1] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "Read",
        "input": {"path": "toolu_a"},
    }


async def test_images_in_tool_results_and_user_messages() -> None:
    image = ImagePart("image/png", PNG)
    history = [
        Message("user", (TextPart("what is this?"), image)),
        _calls("toolu_i"),
        Message("tool", (TextPart("the screenshot:"), image), tool_call_id="toolu_i"),
    ]
    body = await _body(*history)
    source = {"type": "base64", "media_type": "image/png", "data": PNG}
    assert body["messages"][0]["content"][1] == {"type": "image", "source": source}
    result = body["messages"][2]["content"][0]
    assert result["content"][1] == {"type": "image", "source": source}

    plain = await _body(*history, images_in_tool_results=False)
    result = plain["messages"][2]["content"][0]
    assert [b["type"] for b in result["content"]] == ["text", "text"]
    assert "image/png" in result["content"][1]["text"]
    assert plain["messages"][0]["content"][1]["type"] == "image"  # user images stay


async def test_system_messages_user_runs_and_blank_text() -> None:
    body = await _body(
        Message.user("first"),
        Message("system", (TextPart("The user switched to plan mode."),)),
        Message.user("   "),
        Message.user("second"),
        Message("assistant", (TextPart(""), TextPart("answer"))),
        Message.user("third"),
    )
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in messages[0]["content"]] == [
        "first",
        "<system>The user switched to plan mode.</system>",
        "second",
    ]
    assert [b["text"] for b in messages[1]["content"]] == ["answer"]


async def test_invalid_arguments_are_sent_as_an_object_the_api_takes() -> None:
    assert tool_input("") == {}
    assert tool_input('{"path": "a"}') == {"path": "a"}
    assert tool_input('{"path": "a"') == {"_raw": '{"path": "a"'}
    assert tool_input("[1, 2]") == {"_raw": "[1, 2]"}
    broken = Message("assistant", (), (ToolCallRequest("toolu_b", "Read", '{"path": '),))
    body = await _body(Message.user("go"), broken, _result("toolu_b", "invalid", is_error=True))
    assert body["messages"][1]["content"][0]["input"] == {"_raw": '{"path": '}


async def test_thinking_goes_first_signed_and_unsigned_reasoning_is_dropped() -> None:
    assistant = Message(
        "assistant",
        (
            TextPart("I will read."),
            ThinkPart("from another provider"),
            ThinkPart("signed", signature="sig-9"),
            ThinkPart("", redacted="OPAQUE"),
        ),
        (ToolCallRequest("toolu_t", "Read", "{}"),),
    )
    body = await _body(Message.user("go"), assistant, _result("toolu_t", "1"))
    content = body["messages"][1]["content"]
    assert [b["type"] for b in content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert content[0] == {"type": "thinking", "thinking": "signed", "signature": "sig-9"}
    assert content[1] == {"type": "redacted_thinking", "data": "OPAQUE"}


def test_calls_without_results_get_one_and_stray_results_become_text() -> None:
    out = encode_messages(
        [
            Message.user("go"),
            _calls("toolu_1", "toolu_2"),
            _result("toolu_2", "two"),
            _result("toolu_9", "from nowhere"),
        ]
    )
    blocks = out[2]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "tool_result", "text"]
    assert [b.get("tool_use_id") for b in blocks[:2]] == ["toolu_1", "toolu_2"]
    assert blocks[0]["is_error"] is True
    assert "from nowhere" in blocks[2]["text"]
    ending = encode_messages([Message.user("go"), _calls("toolu_3")])
    assert ending[-1]["role"] == "user"
    assert ending[-1]["content"][0]["tool_use_id"] == "toolu_3"


def test_tool_schemas_are_objects() -> None:
    bare, typed = encode_tools([ToolSpec("Ping", "Ping.", {}), READ])
    assert bare["input_schema"] == {"type": "object"}
    assert typed["input_schema"] == {"type": "object", "properties": {"path": {}}}
    assert "cache_control" not in bare
    assert typed["cache_control"] == {"type": "ephemeral"}


def test_a_conversation_starting_with_the_assistant_gets_a_user_line_first() -> None:
    out = encode_messages([Message("assistant", (TextPart("Summary so far."),))])
    assert [m["role"] for m in out] == ["user", "assistant"]


async def test_cache_breakpoints_system_tools_and_the_stable_prefix() -> None:
    first = await _body(Message.user("hi"))
    assert _cached(first) == ["system:0", "tool:Write"]  # no stable message yet
    assert first["system"] == [
        {"type": "text", "text": "You help.", "cache_control": {"type": "ephemeral"}}
    ]
    later = await _body(
        Message.user("hi"),
        _calls("toolu_a"),
        _result("toolu_a", "A"),
        Message(
            "assistant", (TextPart("Now writing."),), (ToolCallRequest("toolu_w", "Write", "{}"),)
        ),
        _result("toolu_w", "written"),
    )
    # the assistant message before the newest tool results: the prefix the next request repeats
    assert _cached(later) == ["system:0", "tool:Write", "message:3:tool_use"]
    assert len(_cached(later)) <= 4


async def test_the_breakpoint_skips_thinking_blocks() -> None:
    assistant = Message("assistant", (ThinkPart("t", signature="s"),), ())
    body = await _body(
        Message.user("a"), Message("assistant", (TextPart("b"),)), assistant, Message.user("c")
    )
    # the assistant turns merge; the breakpoint lands on the last block that can carry one
    content = body["messages"][1]["content"]
    assert [("cache_control" in b, b["type"]) for b in content] == [
        (True, "text"),
        (False, "thinking"),
    ]


async def test_the_system_prompt_bytes_are_identical_across_steps() -> None:
    script = [calls(Call("Read", {"path": "a"})), calls(Call("Write", {})), say("done")]
    system = "You are deftly.\n\nEnvironment: /work, linux.\n" * 20
    history: list[Message] = [Message.user("do it")]
    with ModelServer(script) as server:
        chat = provider(server)
        try:
            for _ in range(3):
                reply = await collect(chat.stream(request(*history, system=system)))
                history.append(reply.message)
                history += [_result(c.id, "ok") for c in reply.message.tool_calls]
        finally:
            await chat.aclose()
    systems = {json.dumps(r["system"], sort_keys=False) for r in server.requests}
    tools = {json.dumps(r["tools"]) for r in server.requests}
    assert len(server.requests) == 3
    assert len(systems) == 1
    assert len(tools) == 1
    assert [t["name"] for t in server.requests[0]["tools"]] == [READ.name, WRITE.name]
    # each step's breakpoint moves to the newest stable message
    assert _cached(server.requests[1])[-1] == "message:1:tool_use"
    assert _cached(server.requests[2])[-1] == "message:3:tool_use"
    # what step 2 cached is a prefix of what step 3 sends
    assert server.requests[2]["messages"][:3] == [
        _without_cache(m) for m in server.requests[1]["messages"]
    ]


def _without_cache(message: dict[str, Any]) -> dict[str, Any]:
    return {
        **message,
        "content": [
            {k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]
        ],
    }
