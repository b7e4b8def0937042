"""The neutral conversation a provider speaks: messages, parts, tools, stream parts, usage.

Plain frozen dataclasses (cheap to build every step, exact to round-trip through a JSONL
transcript with `to_json`/`from_json`). Each provider translates them to and from its own
wire format; nothing above `providers` sees a vendor type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal, TypeAlias

from deftly.contract.records import frozen

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]

FinishReason: TypeAlias = Literal["end_turn", "tool_calls", "max_tokens", "filtered", "other"]
"""Why the model stopped: it ended its reply, it wants tools run, it hit its output limit,
the provider's safety filter cut it, or anything else (kept raw in `Finish.raw`)."""


# -- content -------------------------------------------------------------------------------


@frozen
class TextPart:
    """Text the model wrote or was given."""

    text: str
    type: Literal["text"] = "text"


@frozen
class ThinkPart:
    """The model's reasoning. `signature` (Anthropic) must be sent back unchanged with the
    block; `redacted` holds an encrypted block the API returned instead of text."""

    text: str
    signature: str | None = None
    redacted: str | None = None
    type: Literal["think"] = "think"


@frozen
class ImagePart:
    """An image, as base64 `data` of `media_type` (image/png, image/jpeg, ...)."""

    media_type: str
    data: str
    type: Literal["image"] = "image"


Part: TypeAlias = TextPart | ThinkPart | ImagePart


@frozen
class ToolCallRequest:
    """A tool call the model made: `arguments` is the JSON text exactly as streamed."""

    id: str
    name: str
    arguments: str


@frozen
class Message:
    """One message of the conversation.

    An assistant message has `parts` (text, reasoning) and `tool_calls`; a tool message
    answers one call (`tool_call_id`), with `is_error` set when the call failed; a user
    message may hold images. `meta` is the loop's own bookkeeping (never sent).
    """

    role: Role
    parts: tuple[Part, ...] = ()
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message of plain text."""
        return cls("user", (TextPart(text),))

    @property
    def text(self) -> str:
        """The message's text parts, joined (reasoning and images left out)."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def with_meta(self, **meta: Any) -> Message:
        """The same message with more bookkeeping."""
        return replace(self, meta={**self.meta, **meta})

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (what the transcript stores)."""
        out: dict[str, Any] = {"role": self.role}
        if self.parts:
            out["parts"] = [_part_json(p) for p in self.parts]
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.is_error:
            out["is_error"] = True
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        """The message `to_json` wrote."""
        return cls(
            role=data["role"],
            parts=tuple(_part_from_json(p) for p in data.get("parts", ())),
            tool_calls=tuple(
                ToolCallRequest(c["id"], c["name"], c.get("arguments") or "")
                for c in data.get("tool_calls", ())
            ),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            is_error=bool(data.get("is_error", False)),
            meta=dict(data.get("meta") or {}),
        )


def _part_json(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ThinkPart):
        out: dict[str, Any] = {"type": "think", "text": part.text}
        if part.signature is not None:
            out["signature"] = part.signature
        if part.redacted is not None:
            out["redacted"] = part.redacted
        return out
    return {"type": "image", "media_type": part.media_type, "data": part.data}


def _part_from_json(data: Mapping[str, Any]) -> Part:
    kind = data.get("type")
    if kind == "think":
        return ThinkPart(data.get("text", ""), data.get("signature"), data.get("redacted"))
    if kind == "image":
        return ImagePart(data["media_type"], data["data"])
    return TextPart(data.get("text", ""))


@frozen
class ToolSpec:
    """A tool as the model sees it: name, description, JSON Schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@frozen
class Usage:
    """Tokens of one request (or a sum of them). `input_tokens` counts every prompt token,
    cached or not; `cache_read_tokens`/`cache_write_tokens` say how many of them were."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus reply."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_json(self) -> dict[str, int]:
        """A JSON-ready dict."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Usage:
        """The usage `to_json` wrote (zeros for what is missing)."""
        data = data or {}
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("cache_read_tokens", 0)),
            int(data.get("cache_write_tokens", 0)),
        )


# -- a request ---------------------------------------------------------------------------------


@frozen
class ChatRequest:
    """Everything one model request needs. `system` stays byte-stable within a session so
    providers can cache the prefix; what changes rides in `messages`."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_output_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None


# -- what a stream yields --------------------------------------------------------------------


@frozen
class TextDelta:
    """More of the model's text."""

    text: str


@frozen
class ReasoningDelta:
    """More of the model's reasoning; `signature`/`redacted` arrive when a block ends."""

    text: str
    signature: str | None = None
    redacted: str | None = None


@frozen
class ToolCallStart:
    """A tool call began at stream position `index` (its id already unique)."""

    index: int
    id: str
    name: str


@frozen
class ToolCallDelta:
    """More of the arguments of the call at `index`."""

    index: int
    arguments: str


@frozen
class ToolCallEnd:
    """The call at `index` is complete: its arguments will not grow (dispatch it now)."""

    index: int
    call: ToolCallRequest


@frozen
class UsageReport:
    """The request's token usage (sent once, when the provider reports it)."""

    usage: Usage


@frozen
class Finish:
    """The reply ended; `raw` is the provider's own word for why."""

    reason: FinishReason
    raw: str | None = None


StreamPart: TypeAlias = (
    TextDelta | ReasoningDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | UsageReport | Finish
)
