"""The `anthropic` SDK's exceptions → `ProviderError`, each with what happened and what to
do next.

Nothing of the SDK escapes the provider: status errors by their code and the server's own
words (an HTML proxy page by its title), connection trouble and timeouts naming the base
URL, an `error` event inside the stream by its type (`overloaded_error` stays "overloaded",
anything else is a broken "stream"), anything raised while the stream was read as a
broken stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deftly.providers import errors
from deftly.providers.anthropic_decode import NAME
from deftly.providers.base import ProviderError


def map_error(
    exc: BaseException, *, model: str, base_url: str, key_env: str, streaming: bool
) -> ProviderError:
    """The `ProviderError` for `exc`, raised by the SDK or the HTTP stack under it;
    `streaming`: the reply had begun (a connection failure then is a broken stream)."""
    import anthropic

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        if streaming or exc.status_code < 400:  # an `error` event inside a 200 stream
            return stream_error(exc.body, exc.message)
        return status_error(
            exc.status_code,
            body=exc.body,
            text=errors.response_text(exc),
            headers=exc.response.headers,
            model=model,
            base_url=base_url,
            key_env=key_env,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderError(
            f"The Anthropic API at {base_url} did not answer in time. Try again, or raise "
            "`timeout` in [model].",
            kind="timeout",
            provider=NAME,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        if streaming:
            return broken(exc)
        return ProviderError(
            f"Could not connect to the Anthropic API at {base_url} ({errors.cause(exc)}). Check "
            "the network, and `base_url` in [model] (or --base-url).",
            kind="connection",
            provider=NAME,
        )
    if isinstance(exc, anthropic.APIError):
        return stream_error(exc.body, exc.message)
    if _is_timeout(exc):
        return ProviderError(
            f"The Anthropic API at {base_url} stopped sending mid-reply and timed out. "
            "Trying again usually helps; raise `timeout` in [model] for very long replies.",
            kind="timeout",
            provider=NAME,
        )
    return broken(exc)


def status_error(
    status: int,
    *,
    body: object,
    text: str,
    headers: Any,
    model: str,
    base_url: str,
    key_env: str,
) -> ProviderError:
    """The error for an HTTP error status."""
    said = errors.server_message(body, text) or f"HTTP {status}"
    code = errors.error_code(body)

    def error(message: str, kind: Any, retry_after: float | None = None) -> ProviderError:
        return ProviderError(
            message, kind=kind, status=status, retry_after=retry_after, provider=NAME
        )

    if status == 529 or "overloaded" in code:
        return error(
            f"The Anthropic API is overloaded ({said}). It will be tried again shortly.",
            "overloaded",
            errors.retry_after(headers),
        )
    if status == 429:
        return error(
            f"Rate limited by the Anthropic API ({said}). It will be tried again after the "
            "wait the server asked for; if it persists, slow down or raise your limits.",
            "rate_limit",
            errors.retry_after(headers),
        )
    if status in (401, 403):
        return error(
            f"The Anthropic API refused the API key ({status}: {said}). Check "
            f"{key_env} (or `api_key_env` in [model]) holds a valid key for {base_url}.",
            "auth",
        )
    if status == 404:
        return error(
            f"The Anthropic API at {base_url} has no model {model!r} (404: {said}). The "
            "model name or base_url is wrong: check `model` and `base_url` in [model].",
            "not_found",
        )
    if status == 413 or (status == 400 and errors.CONTEXT_OVERFLOW.search(said)):
        return error(
            f"The conversation is too long for {model} ({said}). Compact it (/compact) or "
            "start a new session.",
            "context_overflow",
        )
    if status in (400, 402) and errors.QUOTA.search(said):
        return error(
            f"The Anthropic account cannot pay for this request ({said}). Add credit or use "
            "another key.",
            "quota",
        )
    if status >= 500 or status in (408, 409):
        return error(
            f"The Anthropic API failed ({status}: {said}). It will be tried again.",
            "server",
            errors.retry_after(headers),
        )
    return error(
        f"The Anthropic API refused the request ({status}: {said}). This is a bug in the "
        "request or a setting in [model] the model does not take; check the model name and "
        "the settings.",
        "bad_request",
    )


def stream_error(body: object, fallback: str) -> ProviderError:
    """The error for an `error` event inside the stream."""
    inner = body.get("error") if isinstance(body, Mapping) else None
    kind = str(inner.get("type") or "") if isinstance(inner, Mapping) else ""
    said = errors.server_message(body) or fallback
    if "overloaded" in kind:
        return ProviderError(
            f"The Anthropic API became overloaded mid-reply ({said}). It will be tried again "
            "shortly.",
            kind="overloaded",
            provider=NAME,
        )
    return ProviderError(
        f"The Anthropic API broke off the reply with an error ({said}). Trying again "
        "usually helps.",
        kind="stream",
        provider=NAME,
    )


def broken(exc: BaseException) -> ProviderError:
    """The error for a stream that failed while it was read."""
    return errors.broken_stream(exc, NAME)


def _is_timeout(exc: BaseException) -> bool:
    import httpx2

    return isinstance(exc, httpx2.TimeoutException | TimeoutError)
