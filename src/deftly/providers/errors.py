"""Helpers for turning an HTTP error into words a person can act on, shared by providers:
the server's own message out of a JSON or HTML body, Retry-After in seconds, and the
patterns that tell a full context window or an empty account from other refusals."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from deftly.providers.base import ProviderError

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")

CONTEXT_OVERFLOW = re.compile(
    r"context[_ ]length|context[_ ]window|maximum context|context size|exceed_context"
    r"|prompt is too long|too many tokens|token limit|input is too long|reduce the length",
    re.IGNORECASE,
)
"""What servers say when the prompt does not fit (OpenAI `context_length_exceeded`, vLLM
"maximum context length", llama.cpp `exceed_context_size_error`, Kimi "token limit")."""

QUOTA = re.compile(
    r"insufficient[_ ](user[_ ])?quota|exceeded[_ ](your[_ ])?current[_ ]quota"
    r"|insufficient[_ ]balance|account balance|billing|credit|out of quota|payment required",
    re.IGNORECASE,
)
"""What servers say when the account cannot pay (a 429 or 402 not worth retrying): OpenAI
`insufficient_quota`, Moonshot `exceeded_current_quota_error`, DeepSeek "Insufficient
Balance", OpenRouter "Insufficient credits". A per-minute "quota exceeded" is a rate limit."""

OVERLOADED = re.compile(r"overloaded|server is busy|at capacity", re.IGNORECASE)

FILTERED = re.compile(r"content[_ ]filter|content management policy|safety system", re.IGNORECASE)

MAX_MESSAGE = 500


def html_title(text: str) -> str | None:
    """The `<title>` of an HTML page (a proxy's error page), or None when it is not HTML."""
    if "<" not in text or not re.search(r"<(!doctype|html|head|body|title)", text, re.I):
        return None
    match = _TITLE.search(text)
    if match:
        title = _SPACE.sub(" ", html.unescape(match.group(1))).strip()
        if title:
            return title
    body = _SPACE.sub(" ", html.unescape(_TAGS.sub(" ", text))).strip()
    return body[:200] or "an HTML error page"


def server_message(body: object, text: str = "") -> str:
    """The server's explanation in an error body: `error.message`, `message`, `detail`,
    an HTML page's title, or the text itself (shortened)."""
    found = _message_in(body)
    if found:
        return _shorten(found)
    if isinstance(body, str) and body.strip():
        text = body
    text = text.strip()
    if not text:
        return ""
    title = html_title(text)
    return _shorten(title if title is not None else text)


def _message_in(body: object) -> str | None:
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping | str):
            inner = _message_in(error) if isinstance(error, Mapping) else error
            if inner:
                return inner
        for key in ("message", "detail", "msg", "error_msg"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list | Mapping):
                found = _message_in(value[0] if isinstance(value, list) and value else value)
                if found:
                    return found
    if isinstance(body, str) and body.strip() and html_title(body) is None:
        return body
    return None


def error_code(body: object) -> str:
    """The machine-readable code or type in an error body ("" when none)."""
    if isinstance(body, Mapping):
        error = body.get("error")
        inner = error if isinstance(error, Mapping) else body
        parts = [str(inner.get(key)) for key in ("code", "type") if inner.get(key) is not None]
        return " ".join(parts)
    return ""


def _shorten(text: str) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def retry_after(headers: Mapping[str, str] | Any, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `Retry-After` as seconds or
    an HTTP date (None when it sent neither, or nonsense)."""
    if headers is None:
        return None
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _header(headers: Mapping[str, str] | Any, name: str) -> str | None:
    getter = getattr(headers, "get", None)
    if getter is None:
        return None
    value = getter(name)
    if value is None:
        value = getter(name.title())
    return value.strip() if isinstance(value, str) and value.strip() else None


def cause(exc: BaseException) -> str:
    """What went wrong under an SDK error (its cause's text), short."""
    inner = exc.__cause__ or exc.__context__ or exc
    text = str(inner).strip() or type(inner).__name__
    return text[:200]


def response_text(exc: Any) -> str:
    """The body of the HTTP response an SDK error carries ("" when it was never read)."""
    try:
        return str(exc.response.text)
    except Exception:  # a streamed response whose body was never read
        return ""


def broken_stream(exc: BaseException, provider: str) -> ProviderError:
    """The error for a reply that failed while it was being read."""
    return ProviderError(
        f"The model's reply broke off mid-way ({cause(exc)}). Trying again usually helps.",
        kind="stream",
        provider=provider,
    )
