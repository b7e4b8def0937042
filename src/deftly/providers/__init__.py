"""Model providers: the `ChatProvider` protocol and its implementations on the official
SDKs (`openai` chat completions for every OpenAI-compatible server, `anthropic` messages).

The SDK-backed classes are imported on first use, so `import deftly` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deftly.providers.base import RETRYABLE, Capabilities, ChatProvider, ErrorKind, ProviderError
from deftly.providers.ids import CallIds
from deftly.providers.reply import Reply, ReplyBuilder, collect
from deftly.providers.retry import RetryPolicy
from deftly.providers.types import (
    ChatRequest,
    Finish,
    FinishReason,
    ImagePart,
    Message,
    Part,
    ReasoningDelta,
    Role,
    StreamPart,
    TextDelta,
    TextPart,
    ThinkPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    ToolSpec,
    Usage,
    UsageReport,
)

if TYPE_CHECKING:
    from deftly.providers.anthropic_messages import AnthropicProvider
    from deftly.providers.openai_chat import OpenAIProvider

__all__ = [
    "RETRYABLE",
    "AnthropicProvider",
    "CallIds",
    "Capabilities",
    "ChatProvider",
    "ChatRequest",
    "ErrorKind",
    "Finish",
    "FinishReason",
    "ImagePart",
    "Message",
    "OpenAIProvider",
    "Part",
    "ProviderError",
    "ReasoningDelta",
    "Reply",
    "ReplyBuilder",
    "RetryPolicy",
    "Role",
    "StreamPart",
    "TextDelta",
    "TextPart",
    "ThinkPart",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallRequest",
    "ToolCallStart",
    "ToolSpec",
    "Usage",
    "UsageReport",
    "collect",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIProvider":
        from deftly.providers.openai_chat import OpenAIProvider

        return OpenAIProvider
    if name == "AnthropicProvider":
        from deftly.providers.anthropic_messages import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
