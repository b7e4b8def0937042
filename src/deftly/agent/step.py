"""One step: stream the model's reply and dispatch each tool call the moment it is complete.

The reply streams in; text and reasoning deltas go out as events; each `ToolCallEnd`
enters the executor's open batch at once (`Batch.add`), so a call runs while the model is
still writing the calls after it, with exactly the guarantees of a whole batch: calls are
prepared (and approvals asked) in the model's order, a call never overtakes an earlier one
it conflicts with, and results come back in call order. Identical calls within the step
run once and share the result.

If the stream fails part-way, the calls already complete still finish (or are cancelled
with the turn) and are kept with their results: the loop then asks again from there, so
nothing runs twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from deftly.agent import events as ev
from deftly.agent.render import moved_images, tool_message
from deftly.agent.repeats import RepeatWatch, call_key
from deftly.contract.result import output_text
from deftly.contract.tool import CancelToken
from deftly.execution.calls import ArgumentsParseError, CallResult, ToolCall, parse_arguments
from deftly.execution.executor import Batch, Executor
from deftly.providers.base import ChatProvider, ProviderError
from deftly.providers.reply import ReplyBuilder
from deftly.providers.types import (
    ChatRequest,
    Finish,
    FinishReason,
    Message,
    ReasoningDelta,
    StreamPart,
    TextDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    Usage,
    UsageReport,
)

Emit = Callable[[ev.AgentEvent], None]


@dataclass
class StepOutcome:
    """What one step produced. `error` is set when the stream failed: `assistant` then
    holds only what was complete (text so far, the calls that ended), and `results` the
    results of those calls."""

    assistant: Message
    results: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish: FinishReason = "end_turn"
    stop_turn: bool = False
    error: ProviderError | None = None
    cancelled: bool = False

    @property
    def has_calls(self) -> bool:
        """Whether the model called tools in this step."""
        return bool(self.assistant.tool_calls)


@dataclass
class _Pending:
    call: ToolCallRequest
    key: str
    future: asyncio.Future[CallResult]
    first: bool  # the first of identical calls (the one that runs)


class Step:
    """Runs one step for one agent (see the module docstring)."""

    def __init__(
        self,
        *,
        executor: Executor,
        provider: ChatProvider,
        emit: Emit,
        agent_id: str,
        turn_id: str,
        repeats: RepeatWatch,
        images: bool,
    ) -> None:
        self._executor = executor
        self._provider = provider
        self._emit = emit
        self._agent_id = agent_id
        self._turn_id = turn_id
        self._repeats = repeats
        self._images = images
        self._builder = ReplyBuilder()
        self._batch: Batch | None = None
        self._pending: list[_Pending] = []
        self._by_key: dict[str, _Pending] = {}
        self._text: list[str] = []
        self._reasoning: list[str] = []

    async def run(self, request: ChatRequest, cancel: CancelToken) -> StepOutcome:
        """Stream the reply to `request`, run its calls, and return the step's messages."""
        self._cancel = cancel
        error: ProviderError | None = None
        stream = self._provider.stream(request)
        consume = asyncio.ensure_future(self._consume(stream))
        stop = asyncio.ensure_future(cancel.wait())
        try:
            await asyncio.wait({consume, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not consume.done():
            consume.cancel()
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await consume
        elif (exc := consume.exception()) is not None:
            if not isinstance(exc, ProviderError):
                raise exc
            error = exc
        with contextlib.suppress(Exception):
            await _aclose(stream)
        self._flush_text()
        results = await self._results()
        assistant = self._builder.message()
        return StepOutcome(
            assistant=assistant,
            results=results,
            usage=self._builder.usage,
            finish=self._finish(assistant),
            stop_turn=self._stop_turn,
            error=error,
            cancelled=cancel.cancelled,
        )

    # -- the stream ----------------------------------------------------------------------

    async def _consume(self, stream: AsyncIterator[StreamPart]) -> None:
        builder, emit = self._builder, self._emit
        agent_id, turn_id = self._agent_id, self._turn_id
        async for part in stream:
            builder.add(part)
            if isinstance(part, TextDelta):
                if self._reasoning:
                    self._flush_reasoning()
                if part.text:
                    self._text.append(part.text)
                    emit(ev.TextDelta(agent_id, turn_id, part.text))
            elif isinstance(part, ReasoningDelta):
                if self._text:
                    self._flush_text()
                if part.text:
                    self._reasoning.append(part.text)
                    emit(ev.ReasoningDelta(agent_id, turn_id, part.text))
            elif isinstance(part, ToolCallStart):
                self._flush_text()
            elif isinstance(part, ToolCallEnd):
                self._dispatch(part.call)
            elif isinstance(part, UsageReport | Finish):
                pass

    def _dispatch(self, call: ToolCallRequest) -> None:
        self._flush_text()
        try:
            shown: object = parse_arguments(call.arguments)
        except ArgumentsParseError:
            shown = call.arguments
        self._emit(ev.ToolCall(self._agent_id, self._turn_id, call.id, call.name, shown))
        key = call_key(call.name, call.arguments)
        earlier = self._by_key.get(key)
        if earlier is not None:
            self._pending.append(_Pending(call, key, earlier.future, first=False))
            earlier.future.add_done_callback(self._announcer(call.id))
            return
        if self._batch is None:
            self._batch = self._executor.open_batch(cancel=self._cancel, turn_id=self._turn_id)
        future = self._batch.add(ToolCall(call.id, call.name, call.arguments))
        future.add_done_callback(self._announcer(None))
        pending = _Pending(call, key, future, first=True)
        self._pending.append(pending)
        self._by_key[key] = pending

    def _announcer(self, call_id: str | None) -> Callable[[asyncio.Future[CallResult]], None]:
        """A done-callback emitting the result event (as `call_id`, for a shared result)."""

        def announce(done: asyncio.Future[CallResult]) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            record = done.result()
            self._announce(record if call_id is None else _renamed(record, call_id))

        return announce

    def _announce(self, record: CallResult) -> None:
        display = record.display.model_dump(exclude_none=True) if record.display else None
        self._emit(
            ev.ToolResult(
                self._agent_id,
                self._turn_id,
                record.tool_call_id,
                record.name,
                record.is_error,
                output_text(record.result.output),
                display,
                record,
            )
        )

    def _flush_text(self) -> None:
        if self._reasoning:
            self._flush_reasoning()
        if self._text:
            self._emit(ev.Text(self._agent_id, self._turn_id, "".join(self._text)))
            self._text.clear()

    def _flush_reasoning(self) -> None:
        self._emit(ev.Reasoning(self._agent_id, self._turn_id, "".join(self._reasoning)))
        self._reasoning.clear()

    # -- the results ---------------------------------------------------------------------

    _stop_turn = False

    async def _results(self) -> list[Message]:
        if self._batch is None:
            return []
        # The reply is complete: a call that must be alone in it is judged now, counting
        # the identical calls that share an earlier one's result.
        shared = [p.call for p in self._pending if not p.first]
        self._batch.seal([ToolCall(c.id, c.name, c.arguments) for c in shared])
        await self._batch.results()
        messages: list[Message] = []
        moved: list[Message] = []
        for pending in self._pending:
            record = pending.future.result()
            if not pending.first:
                record = _renamed(record, pending.call.id)
            nudge = self._repeats.observe(pending.key, pending.call.name) if pending.first else None
            if record.result.stop_turn or (nudge is not None and nudge.stop_turn):
                self._stop_turn = True
            messages.append(
                tool_message(record, images=self._images, reminder=nudge.text if nudge else None)
            )
            if not self._images and (images := moved_images(record)) is not None:
                moved.append(images)
        return messages + moved

    def _finish(self, assistant: Message) -> FinishReason:
        if assistant.tool_calls:
            return "tool_calls"
        reason = self._builder.finish
        return "other" if reason == "tool_calls" else reason


def _renamed(record: CallResult, call_id: str) -> CallResult:
    """The result of an identical call, answering another id."""
    return dataclasses.replace(record, tool_call_id=call_id)


async def _aclose(stream: AsyncIterator[StreamPart]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
