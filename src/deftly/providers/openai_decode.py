"""Chat-completion chunks (or one whole reply) → neutral stream parts, tolerating what
real OpenAI-compatible servers send.

A tool call is announced (`ToolCallStart`) once its name is known and ended
(`ToolCallEnd`) the moment it is complete: a delta for another call, text or reasoning
after it, the finish chunk, or the end of the stream — so the loop can dispatch call 0
while call 1 still streams. Servers differ in how they mark a call: the id and name in
the first delta only or repeated in every one (the name is taken once, never joined),
no `index` (then the call is told apart by its id, a different name, or the previous
call's arguments already being whole JSON), no id or the same id every time (`CallIds`
makes ids unique in the conversation). Usage may be absent, on a final chunk, or on
every chunk (the last one wins); reasoning arrives as `reasoning_content` (Kimi,
DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama), or inside the text as a leading
`<think>` block, or as Mistral's `thinking` parts (see `openai_think`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deftly.providers.base import ProviderError
from deftly.providers.ids import CallIds
from deftly.providers.openai_think import Piece, ThinkSplitter, content_pieces
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

_FINISH: dict[str, FinishReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "eos": "end_turn",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "filtered",
}


def get(obj: Any, name: str) -> Any:
    """A field of an SDK object or a plain dict (None when absent: servers omit fields
    the SDK's types call required; extra fields such as `reasoning_content` are kept by
    the SDK's models and read the same way)."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def usage_of(raw: Any) -> Usage | None:
    """The neutral usage of a wire `usage` object (cached prompt tokens as OpenAI, DeepSeek
    and Kimi report them)."""
    if raw is None:
        return None
    prompt = _int(get(raw, "prompt_tokens"))
    completion = _int(get(raw, "completion_tokens"))
    cached = _int(get(get(raw, "prompt_tokens_details"), "cached_tokens"))
    cached = cached or _int(get(raw, "prompt_cache_hit_tokens")) or _int(get(raw, "cached_tokens"))
    return Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=cached)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class _Call:
    position: int
    key: int | None
    raw_id: str | None = None
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False
    ended: bool = False

    @property
    def text(self) -> str:
        return "".join(self.arguments)


class ChunkDecoder:
    """The state of one reply being decoded; `feed` each chunk, then `end`."""

    def __init__(self, ids: CallIds, *, provider: str = "openai") -> None:
        self._ids = ids
        self._provider = provider
        self._calls: list[_Call] = []
        self._by_key: dict[int, _Call] = {}
        self._usage: Usage | None = None
        self._raw_finish: str | None = None
        self._text = False
        self._think = ThinkSplitter()
        self.chunks = 0

    # -- feeding -----------------------------------------------------------------------

    def feed(self, chunk: Any) -> list[StreamPart]:
        """The parts one streamed chunk adds."""
        self.chunks += 1
        out: list[StreamPart] = []
        usage = usage_of(get(chunk, "usage"))
        if usage is not None:
            self._usage = usage
        choices = get(chunk, "choices") or ()
        if choices:
            choice = choices[0]
            self.feed_delta(get(choice, "delta"), out)
            finish = get(choice, "finish_reason")
            if finish:
                self._raw_finish = str(finish)
                self._end_open(out)
        return out

    def feed_delta(self, delta: Any, out: list[StreamPart], *, whole: bool = False) -> None:
        """Decode one delta (or, `whole`, one complete message) into `out`."""
        if delta is None:
            return
        reasoning = get(delta, "reasoning_content")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = get(delta, "reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._end_open(out)
            out.append(ReasoningDelta(reasoning))
        content = get(delta, "content")
        if content:
            for kind, text in content_pieces(content):
                self._emit(kind, text, out)
            if whole:
                self._flush_text(out)
        for position, entry in enumerate(get(delta, "tool_calls") or ()):
            self._tool_delta(entry, position, out, whole)
        if whole:
            self._end_open(out)

    def _emit(self, kind: str, text: str, out: list[StreamPart]) -> None:
        self._put(self._think.feed(text) if kind == "text" else [("think", text)], out)

    def _flush_text(self, out: list[StreamPart]) -> None:
        self._put(self._think.flush(), out)

    def _put(self, pieces: list[Piece], out: list[StreamPart]) -> None:
        for kind, text in pieces:
            self._end_open(out)  # text or reasoning after a call: the call is complete
            if kind == "think":
                out.append(ReasoningDelta(text))
            else:
                self._text = self._text or bool(text.strip())
                out.append(TextDelta(text))

    def finish(self, raw: str | None, usage: Any) -> None:
        """Record a whole reply's finish reason and usage."""
        self._raw_finish = raw or self._raw_finish
        found = usage_of(usage)
        if found is not None:
            self._usage = found

    # -- tool calls --------------------------------------------------------------------

    def _tool_delta(self, entry: Any, position: int, out: list[StreamPart], whole: bool) -> None:
        index = get(entry, "index")
        raw_id = get(entry, "id")
        raw_id = raw_id if isinstance(raw_id, str) and raw_id else None
        function = get(entry, "function")
        name = get(function, "name")
        name = name if isinstance(name, str) else ""
        arguments = get(function, "arguments")
        if isinstance(arguments, Mapping):  # a few servers send an object, not JSON text
            arguments = json.dumps(arguments)
        arguments = arguments if isinstance(arguments, str) else ""

        key = index if isinstance(index, int) else None
        call = self._locate(key, raw_id, name, position, whole, out)
        if call.ended:
            raise ProviderError(
                f"The server sent more arguments for tool call {call.position + 1} after it "
                "had moved on to another part of its reply; the reply cannot be trusted. "
                "Try again, or turn streaming off for this model (stream = false).",
                kind="stream",
                provider=self._provider,
            )
        if call.raw_id is None and raw_id is not None and not call.started:
            call.raw_id = raw_id
        if not call.name and name:
            call.name = name
        if call.started:
            if arguments:
                call.arguments.append(arguments)
                out.append(ToolCallDelta(call.position, arguments))
            return
        if arguments:
            call.arguments.append(arguments)
        if call.name:
            self._start(call, out)

    def _locate(
        self,
        index: int | None,
        raw_id: str | None,
        name: str,
        position: int,
        whole: bool,
        out: list[StreamPart],
    ) -> _Call:
        if index is not None and not whole:
            found = self._by_key.get(index)
            return found if found is not None else self._open(index, out)
        current = self._calls[-1] if self._calls else None
        if whole or current is None or current.ended or position > 0:
            return self._open(None, out)
        if raw_id is not None and current.raw_id is not None and raw_id != current.raw_id:
            return self._open(None, out)
        if name and current.name and name != current.name:
            return self._open(None, out)
        if name and raw_id is None and _complete_json(current.text):
            return self._open(None, out)
        return current

    def _open(self, key: int | None, out: list[StreamPart]) -> _Call:
        # A delta for a new call: every call before it is complete (a server moves on
        # only when it is done), so the loop may dispatch them now.
        self._end_open(out)
        call = _Call(position=len(self._calls), key=key)
        self._calls.append(call)
        if key is not None:
            self._by_key[key] = call
        return call

    def _start(self, call: _Call, out: list[StreamPart]) -> None:
        call.started = True
        call.id = self._ids.claim(call.raw_id, call.position)
        out.append(ToolCallStart(call.position, call.id, call.name))
        if call.arguments:
            out.append(ToolCallDelta(call.position, call.text))

    def _end(self, call: _Call, out: list[StreamPart]) -> None:
        if not call.started:
            self._start(call, out)
        call.ended = True
        out.append(
            ToolCallEnd(call.position, ToolCallRequest(call.id, call.name, call.text or "{}"))
        )

    def _end_open(self, out: list[StreamPart]) -> None:
        for call in self._calls:
            if not call.ended:
                self._end(call, out)

    # -- the end -----------------------------------------------------------------------

    def end(self) -> list[StreamPart]:
        """The last parts (calls still open, usage, finish); raises `ProviderError` for a
        stream that broke off before its finish, or a reply with nothing in it."""
        out: list[StreamPart] = []
        if self._raw_finish is None and self.chunks == 0:
            raise ProviderError(
                "The model server answered without streaming any reply. If this server "
                "cannot stream, set stream = false in [model]; otherwise check its logs.",
                kind="stream",
                provider=self._provider,
            )
        if self._raw_finish is None:
            raise ProviderError(
                "The model's reply broke off before it finished (the server closed the "
                f"stream after {self.chunks} chunks without a finish reason). Trying again "
                "usually helps; if it keeps happening, check the server's logs.",
                kind="stream",
                provider=self._provider,
            )
        self._flush_text(out)
        self._end_open(out)
        reason = _FINISH.get(self._raw_finish, "other")
        if self._calls and reason == "end_turn":
            reason = "tool_calls"  # Ollama and others say "stop" after tool calls
        if not self._calls and not self._text and reason not in ("max_tokens", "filtered"):
            raise ProviderError(
                "The model sent an empty reply (no text and no tool call). Trying again "
                "usually helps; a model that keeps doing this may not support tool calling "
                "or this prompt format.",
                kind="empty",
                provider=self._provider,
            )
        if self._usage is not None:
            out.append(UsageReport(self._usage))
        out.append(Finish(reason, self._raw_finish))
        return out


def _complete_json(text: str) -> bool:
    if not text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
