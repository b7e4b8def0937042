"""How many tokens a history costs, without a tokenizer: about four characters a token.

Only the part of a prompt the provider has not yet measured is estimated: the keeper
starts from the last request's reported prompt tokens and adds this for what came since.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from deftly.providers.types import ImagePart, Message, TextPart, ThinkPart, ToolSpec

CHARS_PER_TOKEN = 4
"""The usual ratio of English and code text in the common tokenizers."""

IMAGE_TOKENS = 1_600
"""What one image costs (about Anthropic's figure for a full-size image; OpenAI's high
detail tiles cost less)."""

MESSAGE_TOKENS = 4
"""Each message's own framing (role, separators)."""


def text_tokens(text: str) -> int:
    """The estimate for a piece of text."""
    return -(-len(text) // CHARS_PER_TOKEN)


def message_tokens(message: Message) -> int:
    """The estimate for one message: its text, reasoning, calls and images."""
    chars = 0
    images = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            chars += len(part.text)
        elif isinstance(part, ThinkPart):
            chars += len(part.text) + len(part.signature or "") + len(part.redacted or "")
        elif isinstance(part, ImagePart):
            images += 1
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments) + len(call.id)
    return MESSAGE_TOKENS + -(-chars // CHARS_PER_TOKEN) + images * IMAGE_TOKENS


def messages_tokens(messages: Sequence[Message]) -> int:
    """The estimate for a run of messages."""
    return sum(message_tokens(m) for m in messages)


def fixed_tokens(system: str, tools: Sequence[ToolSpec]) -> int:
    """The estimate for what every request repeats: the system prompt and the tool list."""
    chars = len(system)
    for tool in tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return -(-chars // CHARS_PER_TOKEN)
