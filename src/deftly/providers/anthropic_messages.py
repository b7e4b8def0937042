"""`AnthropicProvider`: the messages API on the official `anthropic` SDK.

The SDK never retries (`max_retries=0`): the loop retries whole steps with `RetryPolicy`,
so one policy governs every provider; this module only maps errors. Prompt caching and
the API's message rules live in `anthropic_encode`, the stream's events in
`anthropic_decode`, errors in `anthropic_errors`.

Thinking: `reasoning_effort` picks a thinking budget (`THINKING_BUDGETS`, or a number of
tokens); `max_tokens` is then the output limit plus the budget, so the visible reply keeps
its room, and `temperature` is left out (the API takes none with thinking). A tool-use
continuation whose last assistant message carries no thinking block (its step ran with
thinking off, or came from another provider) is sent with thinking off: the API refuses
it otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from deftly.providers.anthropic_decode import NAME, EventDecoder, message_events
from deftly.providers.anthropic_encode import (
    encode_messages,
    encode_system,
    encode_tools,
    thinking_possible,
)
from deftly.providers.anthropic_errors import map_error
from deftly.providers.base import Capabilities, ProviderError
from deftly.providers.ids import CallIds
from deftly.providers.types import ChatRequest, StreamPart

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

DEFAULT_BASE_URL = "https://api.anthropic.com"

DEFAULT_MAX_OUTPUT_TOKENS = 8192
"""The API requires `max_tokens`; this is the visible reply's room when none is set."""

THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 24576,
    "max": 32000,
}
"""Thinking tokens per `reasoning_effort` ("none"/"off" turn thinking off; the API's
minimum budget is 1024)."""

_OFF = {"", "none", "off", "false", "0"}


def thinking_budget(effort: str | None) -> int | None:
    """The thinking budget for a `reasoning_effort` (None: thinking off); raises
    `ProviderError` for a word it does not know."""
    if effort is None:
        return None
    word = effort.strip().lower()
    if word in _OFF:
        return None
    if word in THINKING_BUDGETS:
        return THINKING_BUDGETS[word]
    if word == "xhigh":
        return THINKING_BUDGETS["max"]
    if word.isdigit():
        return max(1024, int(word))
    raise ProviderError(
        f"reasoning_effort {effort!r} is not one the Anthropic provider knows: use one of "
        f"{', '.join(THINKING_BUDGETS)}, a number of thinking tokens, or none.",
        kind="bad_request",
        provider=NAME,
    )


class AnthropicProvider:
    """A model behind the Anthropic messages API (a `ChatProvider`)."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        max_output_tokens: int | None = DEFAULT_MAX_OUTPUT_TOKENS,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        stream: bool = True,
        images_in_tool_results: bool = True,
        api_key_env: str = "ANTHROPIC_API_KEY",
    ) -> None:
        self._model = model
        self._api_key = api_key
        self._api_key_env = api_key_env
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_output_tokens = max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        self.temperature = temperature
        self.reasoning_effort = reasoning_effort
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.streaming = stream
        self._capabilities = Capabilities(images_in_tool_results=images_in_tool_results)
        self._client: AsyncAnthropic | None = None

    # -- ChatProvider ------------------------------------------------------------------

    @property
    def name(self) -> str:
        """ "anthropic"."""
        return NAME

    @property
    def model(self) -> str:
        """The model id requests go to."""
        return self._model

    @property
    def capabilities(self) -> Capabilities:
        """Images in user messages, and in tool results unless configured off."""
        return self._capabilities

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamPart]:
        """The reply to `request`, part by part (see `ChatProvider.stream`)."""
        decoder = EventDecoder(CallIds(request.messages, prefix="toolu"))
        params = self.params(request, streaming=self.streaming)
        client = self._sdk()
        try:
            response: Any = await client.messages.create(**params)
        except Exception as exc:
            raise self._error(exc, streaming=False) from None
        if not self.streaming:
            for event in message_events(response):
                for part in decoder.feed(event):
                    yield part
        else:
            try:
                async for event in response:
                    for part in decoder.feed(event):
                        yield part
            except ProviderError:
                raise
            except Exception as exc:
                raise self._error(exc, streaming=True) from None
            finally:
                with contextlib.suppress(Exception):
                    await response.close()
        for part in decoder.end():
            yield part

    async def aclose(self) -> None:
        """Release the HTTP client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # -- requests ----------------------------------------------------------------------

    def params(self, request: ChatRequest, *, streaming: bool) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for `request` (the request body)."""
        messages = encode_messages(
            request.messages,
            images_in_tool_results=self._capabilities.images_in_tool_results,
        )
        limit = request.max_output_tokens or self.max_output_tokens
        budget = thinking_budget(request.reasoning_effort or self.reasoning_effort)
        if budget is not None and not thinking_possible(messages):
            budget = None
        params: dict[str, Any] = {"model": self._model, "messages": messages}
        system = encode_system(request.system)
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = encode_tools(request.tools)
        if budget is not None:
            params["max_tokens"] = limit + budget
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        else:
            params["max_tokens"] = limit
            temperature = (
                request.temperature if request.temperature is not None else self.temperature
            )
            if temperature is not None:
                # this SDK's `create` names no `temperature`; the API still takes it
                params["extra_body"] = {"temperature": temperature}
        if streaming:
            params["stream"] = True
        return params

    def _sdk(self) -> AsyncAnthropic:
        if self._client is None:
            if not self._api_key:
                raise ProviderError(
                    f"No Anthropic API key: set {self._api_key_env} in the environment (or "
                    "name another variable with `api_key_env` in [model]).",
                    kind="auth",
                    provider=NAME,
                )
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
                default_headers=self.headers or None,
            )
        return self._client

    def _error(self, exc: BaseException, *, streaming: bool) -> ProviderError:
        return map_error(
            exc,
            model=self._model,
            base_url=self.base_url,
            key_env=self._api_key_env,
            streaming=streaming,
        )
