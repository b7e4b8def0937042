"""A whole reply, gathered from a stream (for callers that do not stream: compaction,
`complete()`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from deftly.providers.types import (
    Finish,
    FinishReason,
    Message,
    Part,
    ReasoningDelta,
    StreamPart,
    TextDelta,
    TextPart,
    ThinkPart,
    ToolCallEnd,
    ToolCallRequest,
    Usage,
    UsageReport,
)


@dataclass
class Reply:
    """What one request produced: the assistant message, usage and why it stopped."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    finish: FinishReason = "end_turn"
    raw_finish: str | None = None


class ReplyBuilder:
    """Folds stream parts into a reply: text runs and reasoning runs become parts in the
    order they came, tool calls in the order they ended."""

    def __init__(self) -> None:
        self._parts: list[Part] = []
        self._text: list[str] = []
        self._think: list[str] = []
        self._calls: list[ToolCallRequest] = []
        self.usage = Usage()
        self.finish: FinishReason = "end_turn"
        self.raw_finish: str | None = None
        self.finished = False

    def add(self, part: StreamPart) -> None:
        """Take one part."""
        if isinstance(part, TextDelta):
            self._flush_think()
            self._text.append(part.text)
        elif isinstance(part, ReasoningDelta):
            self._flush_text()
            self._think.append(part.text)
            if part.signature is not None or part.redacted is not None:
                self._flush_think(part.signature, part.redacted)
        elif isinstance(part, ToolCallEnd):
            self._calls.append(part.call)
        elif isinstance(part, UsageReport):
            self.usage = part.usage
        elif isinstance(part, Finish):
            self.finish, self.raw_finish, self.finished = part.reason, part.raw, True

    @property
    def calls(self) -> list[ToolCallRequest]:
        """The tool calls completed so far."""
        return list(self._calls)

    def message(self) -> Message:
        """The assistant message so far (a partial one if the stream broke off)."""
        self._flush_text()
        self._flush_think()
        return Message("assistant", tuple(self._parts), tuple(self._calls))

    def reply(self) -> Reply:
        """The whole reply."""
        return Reply(self.message(), self.usage, self.finish, self.raw_finish)

    def _flush_text(self) -> None:
        if self._text:
            self._parts.append(TextPart("".join(self._text)))
            self._text.clear()

    def _flush_think(self, signature: str | None = None, redacted: str | None = None) -> None:
        if self._think or signature is not None or redacted is not None:
            self._parts.append(ThinkPart("".join(self._think), signature, redacted))
            self._think.clear()


async def collect(stream: AsyncIterator[StreamPart]) -> Reply:
    """Read a whole stream into a `Reply`."""
    builder = ReplyBuilder()
    async for part in stream:
        builder.add(part)
    return builder.reply()
