"""What the provider sends (the bodies the server recorded): messages every server accepts,
tools, reasoning sent back only where configured, images, and the parameters a server
refused asked again without them."""

from __future__ import annotations

from typing import Any

import pytest

from deftly.providers import (
    ChatRequest,
    ImagePart,
    Message,
    OpenAIProvider,
    ProviderError,
    TextPart,
    ThinkPart,
    ToolCallRequest,
    Usage,
    collect,
)
from tests.providers.openai.helpers import READ, parts, request
from tests.scripted.script import Fail, Reply, Say, Step, say
from tests.scripted.server import ModelServer

PNG = ImagePart("image/png", "iVBORw0KGgo=")

HISTORY = [
    Message.user("look at a.txt"),
    Message(
        "assistant",
        (ThinkPart("I should read it"),),
        (ToolCallRequest("call_1", "Read", '{"path": "a.txt"}'),),
    ),
    Message("tool", (TextPart("hello"),), tool_call_id="call_1"),
    Message("assistant", (ThinkPart("done"), TextPart("It says hello."))),
    Message("user", (TextPart("and this?"), PNG)),
]


async def _sent(req: ChatRequest, **options: Any) -> dict[str, Any]:
    with ModelServer([say("ok")]) as server:
        await parts(server, req, **options)
    return server.requests[0]


async def test_the_conversation_is_encoded_as_every_server_accepts_it() -> None:
    body = await _sent(request(*HISTORY, system="You are deftly."))
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are deftly."}
    assert messages[1] == {"role": "user", "content": "look at a.txt"}
    assert messages[2] == {
        "role": "assistant",
        "content": "",  # never null: llama.cpp and LM Studio refuse it
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"path": "a.txt"}'},
            }
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "hello"}
    assert messages[4] == {"role": "assistant", "content": "It says hello."}
    assert messages[5] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "and this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    }
    assert all(m.get("content") is not None for m in messages)
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": READ.description,
                "parameters": dict(READ.parameters),
            },
        }
    ]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "scripted"


@pytest.mark.parametrize(
    ("echo", "model", "on_call", "on_text"),
    [
        ("auto", "deepseek-reasoner", None, None),
        ("auto", "kimi-k2-thinking", "I should read it", None),
        ("tool_calls", "any", "I should read it", None),
        ("always", "any", "I should read it", "done"),
        ("never", "kimi-k2-thinking", None, None),
    ],
)
async def test_reasoning_goes_back_only_as_configured(
    echo: str, model: str, on_call: str | None, on_text: str | None
) -> None:
    with ModelServer([say("ok")]) as server:
        chat = OpenAIProvider(
            model=model,
            base_url=server.openai_url,
            api_key="k",
            reasoning_echo=echo,  # type: ignore[arg-type]
        )
        await collect(chat.stream(request(*HISTORY)))
        await chat.aclose()
    messages = server.requests[0]["messages"]
    assert messages[2].get("reasoning_content") == on_call
    assert messages[4].get("reasoning_content") == on_text


async def test_an_assistant_tool_call_without_reasoning_still_carries_the_field_for_kimi() -> None:
    plain = Message("assistant", tool_calls=(ToolCallRequest("c", "Read", "{}"),))
    history = [Message.user("x"), plain, Message("tool", (TextPart("r"),), tool_call_id="c")]
    with ModelServer([say("ok")]) as server:
        chat = OpenAIProvider(model="kimi-k2", base_url=server.openai_url, api_key="k")
        await collect(chat.stream(request(*history)))
        await chat.aclose()
    assert server.requests[0]["messages"][2]["reasoning_content"] == ""


def _tool_images_history() -> list[Message]:
    return [
        Message.user("screenshot both"),
        Message(
            "assistant",
            tool_calls=(
                ToolCallRequest("a", "Shot", "{}"),
                ToolCallRequest("b", "Shot", "{}"),
            ),
        ),
        Message("tool", (TextPart("first"), PNG), tool_call_id="a"),
        Message("tool", (TextPart("second"), PNG), tool_call_id="b"),
    ]


async def test_tool_images_go_in_a_user_message_after_the_results_by_default() -> None:
    messages = (await _sent(request(*_tool_images_history())))["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert isinstance(messages[3]["content"], str) and "image 1" in messages[3]["content"]
    assert messages[3]["content"].startswith("first")
    assert "image 2" in messages[4]["content"]
    images = [p for p in messages[5]["content"] if p["type"] == "image_url"]
    assert len(images) == 2


async def test_tool_images_stay_in_the_tool_message_when_the_model_takes_them() -> None:
    messages = (await _sent(request(*_tool_images_history()), images_in_tool_results=True))[
        "messages"
    ]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [p["type"] for p in messages[3]["content"]] == ["text", "image_url"]


async def test_sampling_settings_are_sent_and_the_request_overrides_them() -> None:
    body = await _sent(
        request(max_output_tokens=256), temperature=0.3, reasoning_effort="low", max_output_tokens=9
    )
    assert (body["max_tokens"], body["temperature"], body["reasoning_effort"]) == (256, 0.3, "low")
    body = await _sent(request(tools=[]))
    assert "tools" not in body and "max_tokens" not in body and "temperature" not in body


async def test_extra_headers_go_with_every_request() -> None:
    with ModelServer([say("ok")]) as server:
        await parts(server, headers={"X-Title": "deftly"})
    assert server.headers[0]["x-title"] == "deftly"


def test_openai_itself_gets_max_completion_tokens() -> None:
    chat = OpenAIProvider(model="gpt-5", api_key="k")
    assert "max_completion_tokens" in chat.params(request(max_output_tokens=5), streaming=True)
    local = OpenAIProvider(model="m", api_key="k", base_url="http://127.0.0.1:1/v1")
    assert "max_tokens" in local.params(request(max_output_tokens=5), streaming=True)


def _refusing(parameter: str, message: str, reply: Reply) -> Any:
    def script(body: dict[str, Any]) -> Step:
        if parameter in body:
            return Fail(400, {"error": {"message": message, "type": "invalid_request_error"}})
        return reply

    return script


async def test_a_server_refusing_stream_options_is_asked_again_without_and_remembers() -> None:
    reply = Reply((Say("hi"),), usage=(9, 2), quirks=frozenset({"usage_final_chunk"}))
    script = _refusing("stream_options", "Unrecognized request argument: stream_options", reply)
    with ModelServer(script) as server:
        chat = OpenAIProvider(model="m", base_url=server.openai_url, api_key="k")
        first = await collect(chat.stream(request()))
        second = await collect(chat.stream(request()))
        await chat.aclose()
    assert first.message.text == second.message.text == "hi"
    assert first.usage == Usage(9, 2)  # the server sent usage anyway, on its last chunk
    assert ["stream_options" in r for r in server.requests] == [True, False, False]


async def test_a_server_refusing_max_tokens_gets_max_completion_tokens() -> None:
    message = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead."
    )
    with ModelServer(_refusing("max_tokens", message, say("hi"))) as server:
        chat = OpenAIProvider(model="m", base_url=server.openai_url, api_key="k")
        reply = await collect(chat.stream(request(max_output_tokens=64)))
        await chat.aclose()
    assert reply.message.text == "hi"
    assert server.requests[1]["max_completion_tokens"] == 64
    assert "max_tokens" not in server.requests[1]


async def test_other_bad_requests_are_not_asked_again() -> None:
    with ModelServer([Fail(400, {"error": {"message": "bad temperature"}})]) as server:
        chat = OpenAIProvider(model="m", base_url=server.openai_url, api_key="k")
        with pytest.raises(ProviderError, match="bad temperature"):
            await collect(chat.stream(request()))
        await chat.aclose()
    assert len(server.requests) == 1


def _reasoning_rule(wants: bool) -> Any:
    """A server that refuses assistant tool-call messages without reasoning (Kimi's
    thinking models) or with it (DeepSeek's reasoner)."""

    def script(body: dict[str, Any]) -> Step:
        calling = [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
        has = any("reasoning_content" in m for m in calling)
        if wants and not has:
            message = (
                "thinking is enabled but reasoning_content is missing in assistant tool call "
                "message at index 2"
            )
            return Fail(400, {"error": {"message": message, "type": "invalid_request_error"}})
        if not wants and has:
            message = "The reasoning_content field is not supported in input messages."
            return Fail(400, {"error": {"message": message, "type": "invalid_request_error"}})
        return say("ok")

    return script


@pytest.mark.parametrize(("model", "wants"), [("k3-preview", True), ("kimi-clone", False)])
async def test_auto_reasoning_echo_follows_what_the_server_says(model: str, wants: bool) -> None:
    with ModelServer(_reasoning_rule(wants)) as server:
        chat = OpenAIProvider(model=model, base_url=server.openai_url, api_key="k")
        first = await collect(chat.stream(request(*HISTORY)))
        second = await collect(chat.stream(request(*HISTORY)))
        await chat.aclose()
    assert first.message.text == second.message.text == "ok"
    assert len(server.requests) == 3  # one refusal, then remembered
    assert ("reasoning_content" in server.requests[2]["messages"][2]) is wants


async def test_an_explicit_reasoning_echo_is_not_changed_behind_the_users_back() -> None:
    with ModelServer(_reasoning_rule(True)) as server:
        chat = OpenAIProvider(
            model="m", base_url=server.openai_url, api_key="k", reasoning_echo="never"
        )
        with pytest.raises(ProviderError) as caught:
            await collect(chat.stream(request(*HISTORY)))
        await chat.aclose()
    assert caught.value.kind == "bad_request" and "reasoning_echo" in caught.value.message
    assert len(server.requests) == 1
