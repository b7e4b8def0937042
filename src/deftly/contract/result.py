"""What a call gives back: `ToolResult` and its content parts."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeAlias

from deftly.contract.records import frozen


@frozen
class TextPart:
    """Text in a result made of parts."""

    text: str
    type: Literal["text"] = "text"


@frozen
class ImagePart:
    """An image for a model that can see. `data` is base64, as every wire format wants it."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"

    @classmethod
    def from_bytes(cls, raw: bytes, mime_type: str) -> ImagePart:
        """An image part of raw image bytes (base64-encoded here)."""
        return cls(base64.b64encode(raw).decode("ascii"), mime_type)

    @property
    def data_url(self) -> str:
        """The image as a `data:` URL."""
        return f"data:{self.mime_type};base64,{self.data}"


@frozen
class AudioPart:
    """Audio for a model that can hear. `data` is base64."""

    data: str
    mime_type: str
    type: Literal["audio"] = "audio"


ContentPart: TypeAlias = TextPart | ImagePart | AudioPart
Output: TypeAlias = str | Sequence[ContentPart]


@frozen
class ToolResult:
    """The outcome of one call, as the model will see it.

    `note` is a side channel only the model sees (a status line, a hint), never a UI.
    `truncated` says the tool already cut its output; `spill_exempt` says "do not spill
    me to disk" (Read pages itself). `stop_turn` asks the agent loop to end the turn.
    `delivery` is text for the conversation after this result (a loaded skill): the
    executor pushes it to the agent's injection channel (kind "skill"); it stays on the
    result too, for callers that read it there. `structured` is the same outcome as JSON,
    matching the tool's `output_schema` (MCP `structuredContent`); models read `output`.

    A failed call is `ToolResult.error(message)` (`is_error`). A tool may instead raise
    `ToolError(message)` from `resolve` or `execute`: the executor makes the same error
    result of it, message as is. Other exceptions are bugs (see `deftly.contract.tool`).
    """

    output: Output
    is_error: bool = False
    note: str | None = None
    truncated: bool = False
    stop_turn: bool = False
    spill_exempt: bool = False
    delivery: str | None = None
    structured: Mapping[str, Any] | None = None

    @classmethod
    def ok(
        cls,
        output: Output,
        *,
        note: str | None = None,
        truncated: bool = False,
        spill_exempt: bool = False,
        stop_turn: bool = False,
        delivery: str | None = None,
        structured: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """A successful result."""
        return cls(
            output,
            note=note,
            truncated=truncated,
            spill_exempt=spill_exempt,
            stop_turn=stop_turn,
            delivery=delivery,
            structured=structured,
        )

    @classmethod
    def error(
        cls, message: Output, *, note: str | None = None, stop_turn: bool = False
    ) -> ToolResult:
        """A failed call: `message` tells the model what happened and what to do next."""
        return cls(message, is_error=True, note=note, stop_turn=stop_turn)

    def with_(self, **changes: Any) -> ToolResult:
        """A copy with some fields changed."""
        return replace(self, **changes)

    @property
    def text(self) -> str:
        """The output as plain text (content parts other than text are left out)."""
        return output_text(self.output)


def output_text(output: Output) -> str:
    """The text of an output (content parts other than text are left out)."""
    if isinstance(output, str):
        return output
    return "".join(part.text for part in output if isinstance(part, TextPart))


def is_all_text(output: Output) -> bool:
    """Whether an output is only text (a string, or text parts only)."""
    return isinstance(output, str) or all(isinstance(part, TextPart) for part in output)
