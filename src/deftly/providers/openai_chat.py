"""`OpenAIProvider`: chat completions on the official `openai` SDK, for OpenAI and every
server that speaks its format (Kimi, DeepSeek, vLLM, Ollama, llama.cpp, OpenRouter, ...).

The SDK never retries (`max_retries=0`): the loop retries whole steps with `RetryPolicy`,
so one policy governs every provider. Two refusals are handled here, once per provider,
because they say the request's shape is wrong for this server rather than that it failed:
a server that rejects `stream_options` is asked again without it (no usage then, unless
it sends some anyway), and one that rejects `max_tokens` for `max_completion_tokens` (or
the other way round) is asked again with the other name.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from deftly.providers import errors
from deftly.providers.base import Capabilities, ProviderError
from deftly.providers.ids import CallIds
from deftly.providers.openai_decode import ChunkDecoder, get
from deftly.providers.openai_encode import (
    ReasoningEcho,
    encode_messages,
    encode_tools,
    resolve_echo,
)
from deftly.providers.openai_errors import NAME, map_error
from deftly.providers.types import ChatRequest, StreamPart

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider:
    """A model behind an OpenAI-compatible chat-completions API (a `ChatProvider`)."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        stream: bool = True,
        images_in_tool_results: bool = False,
        reasoning_echo: ReasoningEcho = "auto",
        api_key_env: str = "OPENAI_API_KEY",
    ) -> None:
        self._model = model
        self._api_key = api_key
        self._api_key_env = api_key_env
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.reasoning_effort = reasoning_effort
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.streaming = stream
        self._capabilities = Capabilities(images_in_tool_results=images_in_tool_results)
        self.reasoning_echo = resolve_echo(reasoning_echo, model, base_url)
        self._echo_adaptable = reasoning_echo == "auto"
        self._adapted: set[str] = set()
        self.stream_usage = True
        """Ask for usage with `stream_options` (off once the server refused it)."""
        self.max_tokens_field = (
            "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"
        )
        """OpenAI's newer models refuse `max_tokens`; most other servers know only it."""
        self._client: AsyncOpenAI | None = None

    # -- ChatProvider ------------------------------------------------------------------

    @property
    def name(self) -> str:
        """ "openai"."""
        return NAME

    @property
    def model(self) -> str:
        """The model id requests go to."""
        return self._model

    @property
    def capabilities(self) -> Capabilities:
        """Images in user messages; in tool results only when configured."""
        return self._capabilities

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamPart]:
        """The reply to `request`, part by part (see `ChatProvider.stream`)."""
        decoder = ChunkDecoder(CallIds(request.messages), provider=NAME)
        if not self.streaming:
            body = await self._create(request, streaming=False)
            try:
                whole = self._whole(body, decoder)
            except ProviderError:
                raise
            except Exception as exc:  # a body of an unexpected shape
                raise self._error(exc, streaming=True) from None
            for part in whole:
                yield part
            return
        response = await self._create(request, streaming=True)
        try:
            async for chunk in response:
                for part in decoder.feed(chunk):
                    yield part
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc, streaming=True) from None
        finally:
            await _close(response)
        for part in decoder.end():
            yield part

    async def aclose(self) -> None:
        """Release the HTTP client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # -- requests ----------------------------------------------------------------------

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            if not self._api_key:
                raise ProviderError(
                    f"No API key for {self.base_url}: set {self._api_key_env} in the "
                    "environment (or name another variable with `api_key_env` in [model]). "
                    "A local server that needs no key accepts any value.",
                    kind="auth",
                    provider=NAME,
                )
            from openai import AsyncOpenAI, Timeout

            self._client = AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                # A server that is not there should say so in seconds, not in `timeout`.
                timeout=Timeout(self.timeout, connect=min(10.0, self.timeout)),
                max_retries=0,
                default_headers=self.headers or None,
            )
        return self._client

    def params(self, request: ChatRequest, *, streaming: bool) -> dict[str, Any]:
        """The request body (without `model`'s transport details), as sent."""
        params: dict[str, Any] = {
            "model": self._model,
            "messages": encode_messages(
                request.system,
                request.messages,
                echo=self.reasoning_echo,
                images_in_tool_results=self._capabilities.images_in_tool_results,
            ),
        }
        if request.tools:
            params["tools"] = encode_tools(request.tools)
        if streaming:
            params["stream"] = True
            if self.stream_usage:
                params["stream_options"] = {"include_usage": True}
        limit = request.max_output_tokens or self.max_output_tokens
        if limit is not None:
            params[self.max_tokens_field] = limit
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            params["temperature"] = temperature
        effort = request.reasoning_effort or self.reasoning_effort
        if effort:
            params["reasoning_effort"] = effort
        return params

    async def _create(self, request: ChatRequest, *, streaming: bool) -> Any:
        client = self._sdk()
        for _ in range(4):
            params = self.params(request, streaming=streaming)
            try:
                return await client.chat.completions.create(**params)
            except Exception as exc:
                if not self._adapt(exc, params):
                    raise self._error(exc, streaming=False) from None
        raise AssertionError("unreachable: each adaptation is made once")  # pragma: no cover

    def _adapt(self, exc: Exception, params: Mapping[str, Any]) -> bool:
        """Whether a 400 named a parameter this server does not take, or reasoning it
        wants back or refuses (and the request is changed to suit it, once each)."""
        import openai

        if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
            return False
        said = errors.server_message(exc.body, "").lower()
        if "stream_options" in params and "stream_options" in said:
            return self._once("stream_options", lambda: setattr(self, "stream_usage", False))
        current = self.max_tokens_field
        other = "max_tokens" if current == "max_completion_tokens" else "max_completion_tokens"
        if current in params and current in said and (other in said or "not supported" in said):
            return self._once("max_tokens", lambda: setattr(self, "max_tokens_field", other))
        if self._echo_adaptable and "reasoning_content" in said:
            # Kimi: "reasoning_content is missing in assistant tool call message";
            # DeepSeek's reasoner: reasoning_content is not accepted in input.
            wanted = any(word in said for word in ("missing", "required", "must include"))
            echo: ReasoningEcho = "tool_calls" if wanted else "never"
            if echo != self.reasoning_echo:
                return self._once("echo", lambda: setattr(self, "reasoning_echo", echo))
        return False

    def _once(self, what: str, change: Callable[[], None]) -> bool:
        if what in self._adapted:
            return False
        self._adapted.add(what)
        change()
        return True

    def _error(self, exc: BaseException, *, streaming: bool) -> ProviderError:
        return map_error(exc, model=self._model, base_url=self.base_url, streaming=streaming)

    def _whole(self, body: Any, decoder: ChunkDecoder) -> list[StreamPart]:
        out: list[StreamPart] = []
        choices = get(body, "choices") or ()
        if not choices:
            raise ProviderError(
                f"The model server at {self.base_url} answered without a reply (no choices). "
                "Trying again usually helps.",
                kind="empty",
                provider=NAME,
            )
        choice = choices[0]
        decoder.feed_delta(get(choice, "message"), out, whole=True)
        decoder.finish(get(choice, "finish_reason") or "stop", get(body, "usage"))
        return out + decoder.end()


async def _close(response: Any) -> None:
    close = getattr(response, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):  # closing a broken stream may fail again
            await close()
