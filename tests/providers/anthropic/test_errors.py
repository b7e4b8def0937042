"""Every way an Anthropic request fails becomes a `ProviderError` of the right kind, with
words a person can act on (never an SDK exception, never a traceback)."""

from __future__ import annotations

import socket
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from deftly.providers import AnthropicProvider, ProviderError, TextDelta
from tests.providers.anthropic.helpers import failure, provider, request
from tests.scripted.script import Fail, Reply, Say, Think, say
from tests.scripted.server import ModelServer


def _error(kind: str, message: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": kind, "message": message}}


async def test_429_is_a_rate_limit_with_retry_after_in_seconds() -> None:
    with ModelServer([Fail(429, headers={"retry-after": "7"})]) as server:
        error = await failure(server)
    assert error.kind == "rate_limit"
    assert error.retryable
    assert error.status == 429
    assert error.retry_after == 7.0
    assert "Rate limited" in error.message
    assert len(server.requests) == 1  # the SDK does not retry: the loop does


async def test_retry_after_as_an_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    with ModelServer([Fail(429, headers={"retry-after": when})]) as server:
        error = await failure(server)
    assert error.retry_after is not None
    assert 60 < error.retry_after <= 121


@pytest.mark.parametrize(
    "step",
    [Fail(529), Fail(500, _error("overloaded_error", "Overloaded"))],
    ids=["529", "overloaded_error-body"],
)
async def test_overloaded(step: Fail) -> None:
    with ModelServer([step]) as server:
        error = await failure(server)
    assert error.kind == "overloaded"
    assert error.retryable
    assert "overloaded" in error.message


@pytest.mark.parametrize("status", [500, 503, 408, 409])
async def test_server_errors_are_retryable(status: int) -> None:
    with ModelServer([Fail(status, _error("api_error", "Internal server error"))]) as server:
        error = await failure(server)
    assert error.kind == "server"
    assert error.retryable
    assert "Internal server error" in error.message


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_names_the_variable(status: int) -> None:
    body = _error("authentication_error", "invalid x-api-key")
    with ModelServer([Fail(status, body)]) as server:
        error = await failure(server)
    assert error.kind == "auth"
    assert not error.retryable
    assert "ANTHROPIC_API_KEY" in error.message
    assert "api_key_env" in error.message
    assert "invalid x-api-key" in error.message


async def test_a_custom_key_variable_is_named() -> None:
    with ModelServer([Fail(401)]) as server:
        error = await failure(server, api_key_env="WORK_CLAUDE_KEY")
    assert "WORK_CLAUDE_KEY" in error.message


async def test_no_key_fails_at_the_first_request_without_asking() -> None:
    with ModelServer([say("never")]) as server:
        chat = provider(server, api_key=None)  # constructing never fails
        with pytest.raises(ProviderError) as caught:
            [part async for part in chat.stream(request())]
        await chat.aclose()
    assert caught.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert server.requests == []


async def test_404_names_the_model() -> None:
    body = _error("not_found_error", "model: claude-nope")
    with ModelServer([Fail(404, body)]) as server:
        error = await failure(server)
    assert error.kind == "not_found"
    assert "'scripted'" in error.message
    assert "base_url" in error.message


async def test_a_prompt_too_long_is_a_context_overflow() -> None:
    body = _error("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    with ModelServer([Fail(400, body)]) as server:
        error = await failure(server)
    assert error.kind == "context_overflow"
    assert "210000 tokens" in error.message


async def test_another_400_is_a_bad_request_with_the_servers_words() -> None:
    body = _error("invalid_request_error", "tools.0.name: String should match pattern")
    with ModelServer([Fail(400, body)]) as server:
        error = await failure(server)
    assert error.kind == "bad_request"
    assert not error.retryable
    assert "tools.0.name: String should match pattern" in error.message


async def test_an_empty_account_is_quota() -> None:
    body = _error("invalid_request_error", "Your credit balance is too low to access the API.")
    with ModelServer([Fail(400, body)]) as server:
        error = await failure(server)
    assert error.kind == "quota"


async def test_an_html_error_page_is_reduced_to_its_title() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
        "<body><h1>Bad Gateway</h1><p>nginx</p><script>var x = 1;</script></body></html>"
    )
    with ModelServer([Fail(502, page)]) as server:
        error = await failure(server)
    assert error.kind == "server"
    assert "502 Bad Gateway" in error.message
    assert "<" not in error.message


async def test_a_disconnect_mid_stream_is_a_broken_stream() -> None:
    with ModelServer([say("x" * 200, chunk=5, drop_after=8)]) as server:
        chat = provider(server)
        seen: list[object] = []
        with pytest.raises(ProviderError) as caught:
            async for part in chat.stream(request()):
                seen.append(part)
        await chat.aclose()
    assert caught.value.kind == "stream"
    assert caught.value.retryable
    assert any(isinstance(p, TextDelta) for p in seen)  # it had begun


async def test_an_error_event_in_the_stream() -> None:
    broken = Reply((Say("partial " * 5),), quirks=frozenset({"error_event=api_error"}))
    busy = Reply((Say("partial " * 5),), quirks=frozenset({"error_event=overloaded_error"}))
    with ModelServer([broken, busy]) as server:
        first = await failure(server)
        second = await failure(server)
    assert first.kind == "stream"
    assert "scripted api_error" in first.message
    assert second.kind == "overloaded"


@pytest.mark.parametrize("stream", [True, False])
async def test_an_empty_reply(stream: bool) -> None:
    with ModelServer([Reply((Say(""),))]) as server:
        error = await failure(server, stream=stream)
    assert error.kind == "empty"
    assert error.retryable


async def test_a_reply_of_only_thinking_is_empty() -> None:
    with ModelServer([Reply((Think("hmm"),))]) as server:
        error = await failure(server)
    assert error.kind == "empty"


async def test_an_unreachable_endpoint() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = AnthropicProvider(model="m", api_key="k", base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(ProviderError) as caught:
        [part async for part in chat.stream(request())]
    await chat.aclose()
    assert caught.value.kind == "connection"
    assert f"127.0.0.1:{port}" in caught.value.message


async def test_a_stalled_stream_times_out() -> None:
    gate = threading.Event()
    with ModelServer([Reply((Say("slow"),), gate=gate)]) as server:
        try:
            error = await failure(server, timeout=0.3)
        finally:
            gate.set()
    assert error.kind in ("timeout", "stream")
    assert error.retryable


async def test_success_after_errors_needs_no_new_provider() -> None:
    with ModelServer([Fail(429), Fail(529), say("fine")]) as server:
        chat = provider(server)
        kinds = []
        for _ in range(2):
            with pytest.raises(ProviderError) as caught:
                [part async for part in chat.stream(request())]
            kinds.append(caught.value.kind)
        got = [part async for part in chat.stream(request())]
        await chat.aclose()
    assert kinds == ["rate_limit", "overloaded"]
    assert [p.text for p in got if isinstance(p, TextDelta)] == ["fine"]
