"""Every failure becomes a `ProviderError` of the right kind, with words a person can act
on (no SDK exception escapes), against real HTTP."""

from __future__ import annotations

import socket
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from deftly.providers import OpenAIProvider, ProviderError
from tests.providers.openai.helpers import parts, request
from tests.scripted.script import Call, Fail, Reply, Say, calls, say
from tests.scripted.server import ModelServer

STREAMED = pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])


async def _error(step: Fail | Reply, *, stream: bool = True, **options: object) -> ProviderError:
    with ModelServer([step]) as server, pytest.raises(ProviderError) as caught:
        await parts(server, stream=stream, **options)
    return caught.value


def _body(message: str, **extra: object) -> dict[str, object]:
    return {"error": {"message": message, **extra}}


@STREAMED
@pytest.mark.parametrize(
    ("status", "body", "kind", "words"),
    [
        (401, _body("Incorrect API key provided"), "auth", "OPENAI_API_KEY"),
        (403, _body("forbidden"), "auth", "refused the API key"),
        (404, _body("The model `gpt-9` does not exist"), "not_found", "'scripted'"),
        (429, _body("Rate limit reached"), "rate_limit", "rate-limiting"),
        (
            429,
            _body("You exceeded your current quota", code="insufficient_quota"),
            "quota",
            "no credit",
        ),
        (402, _body("Insufficient Balance"), "quota", "no credit"),
        (500, _body("boom"), "server", "boom"),
        (
            502,
            "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
            "server",
            "502 Bad Gateway",
        ),
        (408, _body("timeout"), "server", "HTTP 408"),
        (409, _body("conflict"), "server", "HTTP 409"),
        (529, _body("Overloaded"), "overloaded", "overloaded"),
        (503, _body("The engine is currently overloaded"), "overloaded", "overloaded"),
        (
            400,
            _body(
                "This model's maximum context length is 8192 tokens. However, you requested "
                "9000 tokens.",
                code="context_length_exceeded",
            ),
            "context_overflow",
            "context window",
        ),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
            "context_overflow",
            "/compact",
        ),
        (400, _body("Invalid value for 'temperature'"), "bad_request", "temperature"),
        (422, {"detail": [{"msg": "field required"}]}, "bad_request", "field required"),
        (400, _body("flagged", code="content_filter"), "filtered", "content filter"),
    ],
)
async def test_status_errors_map_to_kinds(
    stream: bool, status: int, body: object, kind: str, words: str
) -> None:
    error = await _error(Fail(status, body), stream=stream)  # type: ignore[arg-type]
    assert error.kind == kind
    assert error.status == status
    assert words in error.message
    assert "Traceback" not in error.message


async def test_not_found_names_the_model_and_the_base_url() -> None:
    with (
        ModelServer([Fail(404, _body("no such model"))]) as server,
        pytest.raises(ProviderError) as caught,
    ):
        await parts(server)
    assert "'scripted'" in caught.value.message and server.openai_url in caught.value.message
    assert "base URL" in caught.value.message


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({}, None),
    ],
)
async def test_rate_limits_carry_retry_after(headers: dict[str, str], wait: float | None) -> None:
    error = await _error(Fail(429, _body("slow down"), headers))
    assert (error.kind, error.retry_after, error.retryable) == ("rate_limit", wait, True)


async def test_retry_after_as_an_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    error = await _error(Fail(429, _body("slow down"), {"Retry-After": when}))
    assert error.retry_after is not None and 100 < error.retry_after <= 120


async def test_quota_is_not_retried() -> None:
    error = await _error(Fail(429, _body("quota", type="insufficient_quota")))
    assert error.kind == "quota" and not error.retryable


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@STREAMED
async def test_an_unreachable_server_is_a_connection_error_naming_it(stream: bool) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    chat = OpenAIProvider(model="m", base_url=url, api_key="k", stream=stream)
    with pytest.raises(ProviderError) as caught:
        [p async for p in chat.stream(request())]
    await chat.aclose()
    assert caught.value.kind == "connection"
    assert url in caught.value.message and "running" in caught.value.message


async def test_a_server_that_stops_answering_is_a_timeout() -> None:
    gate = threading.Event()  # never opened before the client gives up
    try:
        error = await _error(say("hello", gate=gate), timeout=0.5)
    finally:
        gate.set()
    assert error.kind == "timeout" and "did not answer in time" in error.message


async def test_a_stream_cut_mid_way_is_a_stream_error() -> None:
    error = await _error(calls(Call("Read", {"path": "a" * 50}), chunk=4, drop_after=5))
    assert error.kind == "stream" and error.retryable
    assert "broke off" in error.message


async def test_garbled_data_is_a_stream_error() -> None:
    error = await _error(say("hello there, friend", chunk=2, quirks=frozenset({"garbled"})))
    assert error.kind == "stream" and error.retryable


async def test_an_error_event_mid_stream_is_reported_with_its_message() -> None:
    error = await _error(say("hello there, friend", chunk=2, quirks=frozenset({"error_event"})))
    assert error.kind == "stream" and "upstream model crashed" in error.message


@STREAMED
async def test_an_empty_reply_is_an_empty_error(stream: bool) -> None:
    error = await _error(Reply((Say(""),)), stream=stream)
    assert error.kind == "empty" and error.retryable


@STREAMED
async def test_an_empty_reply_cut_by_the_token_limit_is_no_error(stream: bool) -> None:
    with ModelServer([Reply((Say(""),), finish="length")]) as server:
        got = await parts(server, stream=stream)
    assert got[-1].reason == "max_tokens"  # type: ignore[union-attr]


async def test_no_api_key_is_an_auth_error_naming_the_variable() -> None:
    chat = OpenAIProvider(model="m", api_key=None, api_key_env="DEEPSEEK_API_KEY")
    with pytest.raises(ProviderError) as caught:
        [p async for p in chat.stream(request())]
    assert caught.value.kind == "auth" and "DEEPSEEK_API_KEY" in caught.value.message


async def test_a_whole_reply_of_an_unexpected_shape_is_a_stream_error() -> None:
    body = {"choices": [{"message": {"tool_calls": 7}, "finish_reason": "stop"}]}
    error = await _error(Fail(200, body), stream=False)
    assert error.kind == "stream" and "could not be read" in error.message


async def test_a_whole_reply_without_choices_is_empty() -> None:
    error = await _error(Fail(200, {"id": "x", "choices": []}), stream=False)
    assert error.kind == "empty"


@pytest.mark.parametrize(
    "said",
    [
        "registry.ollama.ai/library/gemma:2b does not support tools",
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    ],
)
async def test_a_model_without_tool_calling_is_told_apart(said: str) -> None:
    error = await _error(Fail(400, _body(said)))
    assert error.kind == "bad_request" and said in error.message
    if "does not support" in said:
        assert "cannot call tools" in error.message
