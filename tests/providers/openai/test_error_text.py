"""The shared error-text helpers (`deftly.providers.errors`) and the SDK-exception mapping
for failures a scripted server cannot produce (a connection reset mid-stream)."""

from __future__ import annotations

import httpx2
import openai

from deftly.providers.errors import error_code, html_title, retry_after, server_message
from deftly.providers.openai_errors import map_error


def test_html_pages_are_reduced_to_their_title() -> None:
    page = "<!DOCTYPE html><html><head><title>503 Service\n Unavailable</title></head></html>"
    assert html_title(page) == "503 Service Unavailable"
    assert html_title("<html><body><h1>Bad  gateway</h1></body></html>") == "Bad gateway"
    assert html_title("a < b, plain text") is None


def test_the_servers_message_is_found_where_each_server_puts_it() -> None:
    assert server_message({"error": {"message": "openai style"}}) == "openai style"
    assert server_message({"error": "a string error"}) == "a string error"
    assert server_message({"message": "top level"}) == "top level"
    assert server_message({"detail": [{"msg": "fastapi style"}]}) == "fastapi style"
    assert server_message({"detail": "plain detail"}) == "plain detail"
    assert server_message(None, "<html><title>Gateway Timeout</title></html>") == "Gateway Timeout"
    assert server_message("plain text body") == "plain text body"
    assert server_message({}, "") == ""
    assert len(server_message({"message": "x" * 2000})) <= 500


def test_error_codes() -> None:
    body = {"error": {"code": "insufficient_quota", "type": "insufficient_quota"}}
    assert error_code(body) == "insufficient_quota insufficient_quota"
    assert error_code("text") == ""


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
    assert retry_after(httpx2.Headers({"Retry-After": "2"})) == 2.0


def test_a_connection_lost_mid_stream_is_a_broken_stream_and_before_it_a_connection_error() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    try:
        raise openai.APIConnectionError(request=request) from httpx2.RemoteProtocolError(
            "peer closed connection without sending complete message body"
        )
    except openai.APIConnectionError as exc:
        lost = exc
    during = map_error(lost, model="m", base_url="http://127.0.0.1:1/v1", streaming=True)
    before = map_error(lost, model="m", base_url="http://127.0.0.1:1/v1", streaming=False)
    assert during.kind == "stream" and "peer closed connection" in during.message
    assert before.kind == "connection" and "http://127.0.0.1:1/v1" in before.message


def test_quota_words_of_each_provider_but_not_a_per_minute_limit() -> None:
    from deftly.providers.errors import QUOTA

    for said in (
        "You exceeded your current quota, please check your plan and billing details.",
        "exceeded_current_quota_error: Your account is suspended",
        "Insufficient Balance",
        "Insufficient credits. Add more using https://openrouter.ai/credits",
    ):
        assert QUOTA.search(said), said
    assert not QUOTA.search("Rate limit reached for requests per minute")
