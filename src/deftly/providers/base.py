"""What every model provider is: a stream of typed parts for one request, and its errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from deftly.contract.records import frozen
from deftly.providers.types import ChatRequest, StreamPart

ErrorKind: TypeAlias = Literal[
    "connection",  # unreachable, reset, DNS: retried
    "timeout",  # no answer in time: retried
    "rate_limit",  # 429: retried after Retry-After
    "overloaded",  # 529 / "overloaded_error": retried
    "server",  # 5xx, 408, 409: retried
    "empty",  # no text and no tool calls: retried
    "stream",  # the stream broke off or was garbled mid-way: retried
    "auth",  # 401/403 or no key: not retried
    "not_found",  # 404: a wrong model name or base URL: not retried
    "bad_request",  # 400/422: not retried
    "context_overflow",  # the prompt is longer than the model's window: compact, then retry
    "quota",  # the account is out of credit: not retried
    "filtered",  # the provider's safety filter: not retried
]

RETRYABLE: frozenset[str] = frozenset(
    {"connection", "timeout", "rate_limit", "overloaded", "server", "empty", "stream"}
)


class ProviderError(Exception):
    """A model request failed. `message` says what happened and what to do, in words a
    person can act on (no traceback); `retry_after` is the server's Retry-After, seconds."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ErrorKind = kind
        self.status = status
        self.retry_after = retry_after
        self.provider = provider

    @property
    def retryable(self) -> bool:
        """Whether trying the same request again may succeed."""
        return self.kind in RETRYABLE


@frozen
class Capabilities:
    """What a model accepts beyond text."""

    images_in_tool_results: bool = False
    """Images may go back inside a tool result (otherwise: a text pointer to the file)."""
    images_in_user_messages: bool = True


@runtime_checkable
class ChatProvider(Protocol):
    """A model behind an API. `stream` yields the reply's parts as they arrive: text and
    reasoning deltas, each tool call's start, argument deltas and end (with ids unique in
    the conversation), usage, and last a `Finish`. A server that cannot stream is asked
    without streaming and its reply yielded as parts all the same. Failures raise
    `ProviderError`, never a vendor exception."""

    @property
    def name(self) -> str:
        """The provider's kind: "openai", "anthropic", ..."""
        ...

    @property
    def model(self) -> str:
        """The model id requests go to."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What the model accepts beyond text."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamPart]:
        """The reply to `request`, part by part."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP client."""
        ...
