"""The `openai` SDK's exceptions → `ProviderError`, each with what happened and what to do.

Nothing of the SDK escapes a provider: status errors by their code and the server's own
words, connection trouble and timeouts naming the base URL, anything raised while the
stream was being read as a broken stream.
"""

from __future__ import annotations

import json
from typing import Any

from deftly.providers import errors
from deftly.providers.base import ErrorKind, ProviderError

NAME = "openai"


def map_error(exc: BaseException, *, model: str, base_url: str, streaming: bool) -> ProviderError:
    """The `ProviderError` for `exc`, raised by the SDK or the HTTP stack under it;
    `streaming`: the reply had begun (so a connection failure is a broken stream)."""
    import openai

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return status_error(
            exc.status_code,
            body=exc.body,
            text=errors.response_text(exc),
            headers=exc.response.headers,
            model=model,
            base_url=base_url,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(
            f"The model server at {base_url} did not answer in time. It may be busy or "
            "loading the model; try again, or raise `timeout` in [model].",
            kind="timeout",
            provider=NAME,
        )
    if isinstance(exc, openai.APIConnectionError):
        if streaming:
            return errors.broken_stream(exc, NAME)
        return ProviderError(
            f"Could not connect to the model server at {base_url} ({errors.cause(exc)}). Is the "
            "server running at that address? Check `base_url` in [model] (or --base-url).",
            kind="connection",
            provider=NAME,
        )
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        message = errors.server_message(exc.body) or exc.message
        return _from_words(message, errors.error_code(exc.body), model=model, base_url=base_url)
    if isinstance(exc, json.JSONDecodeError | ValueError | KeyError | TypeError):
        return ProviderError(
            f"The model server at {base_url} sent a reply that could not be read ({exc}). "
            "Trying again usually helps; if it keeps happening the server may not speak the "
            "OpenAI chat-completions format (check `provider` and `base_url`).",
            kind="stream",
            provider=NAME,
        )
    return errors.broken_stream(exc, NAME)


def status_error(
    status: int,
    *,
    body: object,
    text: str,
    headers: Any,
    model: str,
    base_url: str,
) -> ProviderError:
    """The error for an HTTP status with its body."""
    said = errors.server_message(body, text) or f"HTTP {status}"
    code = errors.error_code(body)
    words = f"{said} {code}"

    def error(kind: ErrorKind, message: str, retry_after: float | None = None) -> ProviderError:
        return ProviderError(
            message, kind=kind, status=status, retry_after=retry_after, provider=NAME
        )

    if status in (401, 403):
        return error(
            "auth",
            f"The model server at {base_url} refused the API key (HTTP {status}: {said}). "
            "Check the key in the environment variable named by `api_key_env` "
            "(default OPENAI_API_KEY), and that it is valid for this server.",
        )
    if status == 402 or (status == 429 and errors.QUOTA.search(words)):
        return error(
            "quota",
            f"The account has no credit left for this model (HTTP {status}: {said}). "
            "Add credit or raise the quota with the provider, or use another model.",
        )
    if status == 429:
        wait = errors.retry_after(headers)
        return error(
            "rate_limit",
            f"The model server is rate-limiting requests (HTTP 429: {said}). Waiting and "
            "trying again helps; if it keeps happening, run fewer agents at once or raise "
            "the account's rate limit.",
            retry_after=wait,
        )
    if status == 529 or errors.OVERLOADED.search(words):
        return error(
            "overloaded",
            f"The model server is overloaded (HTTP {status}: {said}). Try again shortly.",
            retry_after=errors.retry_after(headers),
        )
    if status == 404:
        return error(
            "not_found",
            f"The model server at {base_url} answered 404 for model {model!r} ({said}). "
            "Either the model name is wrong (check `model` in [model], or --model) or the "
            "base URL is (OpenAI-compatible servers usually end in /v1: check `base_url`).",
        )
    if status >= 500 or status in (408, 409):
        return error(
            "server",
            f"The model server failed (HTTP {status}: {said}). Trying again usually helps.",
            retry_after=errors.retry_after(headers),
        )
    return _from_words(said, code, model=model, base_url=base_url, status=status)


def _from_words(
    said: str, code: str, *, model: str, base_url: str, status: int | None = None
) -> ProviderError:
    words = f"{said} {code}"
    where = f"HTTP {status}: " if status is not None else ""
    if errors.CONTEXT_OVERFLOW.search(words):
        return ProviderError(
            f"The conversation is longer than the model's context window ({where}{said}). "
            "Compact it (/compact) or set a smaller `context_window` in [model] so it is "
            "compacted sooner.",
            kind="context_overflow",
            status=status,
            provider=NAME,
        )
    if errors.FILTERED.search(words):
        return ProviderError(
            f"The provider's content filter refused the request ({where}{said}). Rephrase "
            "the request or leave out the content it objects to.",
            kind="filtered",
            status=status,
            provider=NAME,
        )
    if status is None:
        return ProviderError(
            f"The model server reported an error mid-reply ({said}). Trying again usually helps.",
            kind="stream",
            provider=NAME,
        )
    hint = "Check the [model] settings this server does not accept."
    lowered = said.lower()
    if "support" in lowered and ("tools" in lowered or "tool call" in lowered):
        hint = (
            "This model cannot call tools, and deftly needs a model that can: pick another "
            "(for Ollama, one tagged 'tools'), or start the server with tool calling on "
            "(vLLM: --enable-auto-tool-choice --tool-call-parser ...; llama.cpp: --jinja)."
        )
    elif "reasoning_content" in said:
        hint = (
            'Set reasoning_echo in [model]: "tool_calls" if the server wants the model\'s '
            'reasoning back, "never" if it refuses it.'
        )
    return ProviderError(
        f"The model server refused the request for model {model!r} ({where}{said}). {hint}",
        kind="bad_request",
        status=status,
        provider=NAME,
    )
