"""Anthropic stream events (or one whole message) → neutral stream parts.

Each content block maps to parts as it streams: text → `TextDelta`; thinking →
`ReasoningDelta`s and, at the block's end, one carrying the signature (redacted thinking:
one carrying the encrypted data), so `ReplyBuilder` keeps each block whole and signed;
`tool_use` → `ToolCallStart` (its id made unique in the conversation by `CallIds`),
`ToolCallDelta` per `input_json_delta`, and `ToolCallEnd` at the block's end — the
loop may dispatch the call while later blocks still stream. Usage and the finish come
last. A whole (non-streamed) message is replayed as the events it would have streamed,
so both paths share one decoder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from deftly.providers.base import ProviderError
from deftly.providers.ids import CallIds
from deftly.providers.types import (
    Finish,
    FinishReason,
    ReasoningDelta,
    StreamPart,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    Usage,
    UsageReport,
)

NAME = "anthropic"

FINISH: dict[str, FinishReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "filtered",
}


def get(obj: Any, name: str) -> Any:
    """A field of an SDK object or a plain dict (None when absent)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class _Block:
    kind: str
    call: int = -1
    id: str = ""
    name: str = ""
    json: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""


class EventDecoder:
    """One reply's events, fed in order; `end()` gives the last parts or the error."""

    def __init__(self, ids: CallIds) -> None:
        self._ids = ids
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self._text = False
        self._raw_finish: str | None = None
        self._stopped = False
        self._usage: dict[str, int] = {}
        self.events = 0

    def feed(self, event: Any) -> list[StreamPart]:
        """The parts one event yields."""
        self.events += 1
        kind = get(event, "type")
        if kind == "message_start":
            self._take_usage(get(get(event, "message"), "usage"))
        elif kind == "content_block_start":
            return self._start(_int(get(event, "index")), get(event, "content_block"))
        elif kind == "content_block_delta":
            return self._delta(_int(get(event, "index")), get(event, "delta"))
        elif kind == "content_block_stop":
            return self._stop(_int(get(event, "index")))
        elif kind == "message_delta":
            reason = get(get(event, "delta"), "stop_reason")
            if reason is not None:
                self._raw_finish = str(reason)
            self._take_usage(get(event, "usage"))
        elif kind == "message_stop":
            self._stopped = True
        return []

    # -- blocks --------------------------------------------------------------------------

    def _start(self, index: int, block: Any) -> list[StreamPart]:
        kind = str(get(block, "type") or "")
        state = _Block(kind)
        self._blocks[index] = state
        if kind == "text":
            return self._say(get(block, "text"))
        if kind == "thinking":
            state.signature = str(get(block, "signature") or "")
            text = get(block, "thinking")
            return [ReasoningDelta(text)] if isinstance(text, str) and text else []
        if kind == "redacted_thinking":
            state.data = str(get(block, "data") or "")
            return []
        if kind == "tool_use":
            state.call = self._calls
            self._calls += 1
            state.name = str(get(block, "name") or "")
            state.id = self._ids.claim(get(block, "id"), state.call)
            return [ToolCallStart(state.call, state.id, state.name)]
        return []  # server tools, citations...: nothing the loop acts on

    def _delta(self, index: int, delta: Any) -> list[StreamPart]:
        state = self._blocks.get(index)
        kind = get(delta, "type")
        if kind == "text_delta":
            return self._say(get(delta, "text"))
        if kind == "thinking_delta":
            text = get(delta, "thinking")
            return [ReasoningDelta(text)] if isinstance(text, str) and text else []
        if kind == "signature_delta" and state is not None:
            state.signature += str(get(delta, "signature") or "")
        elif kind == "input_json_delta" and state is not None and state.kind == "tool_use":
            piece = get(delta, "partial_json")
            if isinstance(piece, str) and piece:
                state.json.append(piece)
                return [ToolCallDelta(state.call, piece)]
        return []

    def _stop(self, index: int) -> list[StreamPart]:
        state = self._blocks.pop(index, None)
        if state is None:
            return []
        if state.kind == "thinking" and state.signature:
            return [ReasoningDelta("", signature=state.signature)]
        if state.kind == "redacted_thinking" and state.data:
            return [ReasoningDelta("", redacted=state.data)]
        if state.kind == "tool_use":
            arguments = "".join(state.json) or "{}"
            return [ToolCallEnd(state.call, ToolCallRequest(state.id, state.name, arguments))]
        return []

    def _say(self, text: Any) -> list[StreamPart]:
        if not isinstance(text, str) or not text:
            return []
        if text.strip():
            self._text = True
        return [TextDelta(text)]

    def _take_usage(self, usage: Any) -> None:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = get(usage, key)
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[key] = value  # message_delta's counts are cumulative

    # -- the end -------------------------------------------------------------------------

    @property
    def usage(self) -> Usage | None:
        """The usage reported so far (None before any)."""
        if not self._usage:
            return None
        read = self._usage.get("cache_read_input_tokens", 0)
        write = self._usage.get("cache_creation_input_tokens", 0)
        return Usage(
            input_tokens=self._usage.get("input_tokens", 0) + read + write,
            output_tokens=self._usage.get("output_tokens", 0),
            cache_read_tokens=read,
            cache_write_tokens=write,
        )

    def end(self) -> list[StreamPart]:
        """The last parts (usage, finish); raises `ProviderError` for a stream that broke
        off, or a reply with nothing in it."""
        if self._raw_finish is None or self._blocks:
            raise ProviderError(
                "The model's reply broke off before it finished (the stream ended after "
                f"{self.events} events without its stop). Trying again usually helps; if "
                "it keeps happening, check the network or the proxy in front of the API.",
                kind="stream",
                provider=NAME,
            )
        reason = FINISH.get(self._raw_finish, "other")
        if not self._calls and not self._text and reason not in ("max_tokens", "filtered"):
            raise ProviderError(
                "The model sent an empty reply (no text and no tool call). Trying again "
                "usually helps.",
                kind="empty",
                provider=NAME,
            )
        out: list[StreamPart] = []
        usage = self.usage
        if usage is not None:
            out.append(UsageReport(usage))
        out.append(Finish(reason, self._raw_finish))
        return out


def message_events(message: Any) -> Iterator[dict[str, Any]]:
    """The events a whole message would have streamed."""
    usage = get(message, "usage")
    yield {"type": "message_start", "message": {"usage": usage}}
    for index, block in enumerate(get(message, "content") or ()):
        kind = get(block, "type")
        if kind == "tool_use":
            start = {"type": "tool_use", "id": get(block, "id"), "name": get(block, "name")}
            yield {"type": "content_block_start", "index": index, "content_block": start}
            arguments = get(block, "input")
            if arguments:
                text = json.dumps(arguments, ensure_ascii=False)
                delta = {"type": "input_json_delta", "partial_json": text}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            yield {"type": "content_block_start", "index": index, "content_block": block}
        yield {"type": "content_block_stop", "index": index}
    yield {"type": "message_delta", "delta": {"stop_reason": get(message, "stop_reason")}}
    yield {"type": "message_stop"}
