"""The executor: one batch of model tool calls, through four phases.

1. preflight (no I/O): decode the arguments exactly as the model sent them, look the tool
   up, ask the guards (tool policy, deferred tools), validate the arguments.
2. prepare (in the model's order, one by one): resolve, run the before-hooks (permission
   gate, plan mode, PreToolUse hooks...), announce the call.
3. schedule: run what does not conflict concurrently; conflicting calls keep their order.
4. finalize (as each call ends): after-hooks, normalise, apply the output budget.

Whatever goes wrong in one call becomes that call's error result; the rest of the batch
runs. Results come back in the model's call order.

Failure convention: a tool fails a call by returning `ToolResult.error(...)` or by raising
`ToolError` (from `resolve` or `execute`): the error's message becomes the result as is.
Any other exception is a bug in the tool: a short error result naming it, logged.

Who is calling: every event and every `ToolContext` carries the executor's `identity`
(session, agent), in the turn given to `run_batch`. What the model must hear next goes
through the agent's injection channel: a result's `delivery` is pushed there ("skill");
without an agent loop (`notices_on_results`), task notices ride on the next result's note.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import functools
import inspect
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from deftly.contract.errors import InvalidArguments, ToolError
from deftly.contract.identity import Identity
from deftly.contract.result import ToolResult
from deftly.contract.tool import CancelToken, ToolContext, ToolExecution, ToolUpdate
from deftly.contract.traits import traits_of
from deftly.execution.alone import alone_refusal, must_be_alone
from deftly.execution.calls import (
    ArgumentsParseError,
    ArgumentsTooDeep,
    CallResult,
    Outcome,
    ToolCall,
    parse_arguments,
)
from deftly.execution.collector import BATCH_ROOM
from deftly.execution.events import (
    BatchStarted,
    EventBus,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
)
from deftly.execution.hooks import (
    AfterContext,
    AfterHook,
    Allow,
    BeforeContext,
    BeforeHook,
    HookChain,
    Proceed,
    Veto,
)
from deftly.execution.normalize import coerce_result, normalize_result
from deftly.execution.notices import (
    RESULT_KINDS,
    SKILL_KIND,
    TASK_FINISHED_KIND,
    InjectionChannel,
    NoticeSource,
    with_notices,
)
from deftly.execution.scheduler import Scheduler
from deftly.execution.spill import Spiller
from deftly.policy.paths import Lookups, one_look
from deftly.registry.registry import RegisteredTool, ToolRegistry

log = logging.getLogger(__name__)

Guard: TypeAlias = Callable[[ToolCall, RegisteredTool], "str | None"]
MissingDescriber: TypeAlias = Callable[[str], "str | None"]

DEFAULT_GRACE_SECONDS = 2.0


def cancelled_text(name: str, cancel: CancelToken) -> str:
    """What the model is told about a call that was cancelled (by the user, or not)."""
    if cancel.by_user:
        return (
            f'The user interrupted "{name}" (and anything running with it). This was a '
            "deliberate choice, not an error or a timeout: do not retry it; wait for the "
            "user's next instruction."
        )
    reason = f" ({cancel.reason})" if cancel.reason and cancel.reason != "cancelled" else ""
    return f'Tool "{name}" was cancelled before it finished{reason}.'


@dataclass(eq=False)
class _Slot:
    index: int
    call: ToolCall
    args: Any = None
    entry: RegisteredTool | None = None
    execution: ToolExecution | None = None
    identity: Identity = field(default_factory=Identity)
    handoffs: list[object] = field(default_factory=list)
    settled: tuple[ToolResult, Outcome] | None = None
    started_at: float | None = None
    finished_at: float | None = None
    grace_expired: bool = False
    task: asyncio.Task[Any] | None = None
    result: asyncio.Future[CallResult] | None = None

    @property
    def name(self) -> str:
        return self.call.name


@dataclass
class Executor:
    """Runs batches of model tool calls for one agent: preflight, prepare, schedule,
    finalize (see the module docstring).

    `identity` says whose calls these are (stamped on every event and `ToolContext`).
    `injections` is the agent's "tell the model next turn" channel (a
    `deftly.session.Injections`): with an agent loop (`notices_on_results=False`) a
    result's `delivery` is pushed to it. With
    `notices_on_results` (no agent loop) the kinds that always rode on results (task
    notices) are drained into the next result's note; an agent loop sets it False and
    drains the channel itself before each model request.
    """

    registry: ToolRegistry
    spiller: Spiller
    events: EventBus = field(default_factory=EventBus)
    before: HookChain[BeforeHook] = field(default_factory=HookChain)
    after: HookChain[AfterHook] = field(default_factory=HookChain)
    guards: list[Guard] = field(default_factory=list)
    missing: list[MissingDescriber] = field(default_factory=list)
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    notices: list[NoticeSource] = field(default_factory=list)
    """Drained as each result is finished: what they give rides on that result's note
    (or, with `notices_on_results` off, goes to `injections` as "task_finished")."""
    identity: Identity = field(default_factory=Identity)
    """Session and agent of every call; `run_batch(turn_id=...)` sets the turn."""
    injections: InjectionChannel | None = None
    """The agent's injection channel (None: deliveries stay on results only)."""
    notices_on_results: bool = True
    """No agent loop drains the channel: the `RESULT_KINDS` ride on the next result."""

    def add_notice_source(self, source: NoticeSource) -> Callable[[], None]:
        """Let `source`'s notices ride on the next results; returns the way to stop.

        Kept for hosts written before the injection channel: a notice source is drained
        as a "task_finished" injection would be. New code registers an injection source
        on the channel instead.
        """
        self.notices.append(source)

        def remove() -> None:
            if source in self.notices:
                self.notices.remove(source)

        return remove

    async def run_batch(
        self,
        calls: Sequence[ToolCall],
        *,
        cancel: CancelToken | None = None,
        turn_id: str | None = None,
    ) -> list[CallResult]:
        """Run one batch; returns one `CallResult` per call, in the order given.

        `turn_id` is the agent loop's turn these calls belong to (None: the executor's own
        `identity.turn_id`, None outside a loop); it is on every event and context.
        """
        if not calls:
            return []
        token = cancel or CancelToken()
        inner = self.start_batch(calls, cancel=token, turn_id=turn_id)
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            token.cancel("the batch was cancelled", by_user=True)
            with contextlib.suppress(BaseException):
                await inner
            raise

    def start_batch(
        self,
        calls: Sequence[ToolCall],
        *,
        cancel: CancelToken,
        turn_id: str | None = None,
    ) -> asyncio.Future[list[CallResult]]:
        """`run_batch` without the wait: the batch starts now, on the running loop, and the
        future holds its results. For a caller that waits its own way (`deftly serve` wakes
        on the end or on a question for the client): one task fewer than awaiting
        `run_batch` in a task. Stop it through `cancel`, which gives the calls their grace;
        cancelling the future stops them at once."""
        if not calls:
            done: asyncio.Future[list[CallResult]] = asyncio.get_running_loop().create_future()
            done.set_result([])
            return done
        if len(calls) == 1:
            identity = self.identity if turn_id is None else self.identity.in_turn(turn_id)
            return asyncio.ensure_future(self._run_one(calls[0], cancel, identity))
        batch = self.open_batch(cancel=cancel, turn_id=turn_id)
        for call in calls:
            batch.add(call)
        return asyncio.ensure_future(batch.results())

    async def _run_one(
        self, call: ToolCall, cancel: CancelToken, identity: Identity
    ) -> list[CallResult]:
        """A batch of one call, with what a `Batch` guarantees and none of its machinery:
        one call conflicts with nothing and is its reply's only call, so it needs no
        preparing queue, scheduler or task of its own; it runs in this task, and the
        cancel watcher is a timer set only if the batch is cancelled."""
        self.events.emit(BatchStarted(identity))
        slot = self._preflight(0, call, identity)
        if slot.settled is None and cancel.cancelled:
            slot.settled = (ToolResult.error(cancelled_text(slot.name, cancel)), Outcome.CANCELLED)
        if slot.settled is None:
            with one_look(Lookups()):
                await self._prepare(slot, [call], cancel)
        self._announce(slot)
        if slot.settled is not None:
            return [await self._finalize(slot, *slot.settled)]
        running: set[_Slot] = set()
        timer: asyncio.TimerHandle | None = None

        def expire() -> None:
            for late in list(running):
                if late.task is not None and not late.task.done():
                    late.grace_expired = True
                    late.task.cancel()

        def watch() -> None:
            nonlocal timer
            timer = asyncio.get_running_loop().call_later(self.grace_seconds, expire)

        stop_watching = cancel.on_cancel(watch)
        try:
            result, outcome = await self._execute(slot, cancel, running)
        finally:
            stop_watching()
            if timer is not None:
                timer.cancel()
        return [await self._finalize(slot, result, outcome)]

    def open_batch(self, *, cancel: CancelToken | None = None, turn_id: str | None = None) -> Batch:
        """A batch whose calls arrive one at a time (streaming dispatch): `add` each call
        the moment its arguments are complete, then await `results()`. The guarantees are
        those of `run_batch`, which is this with every call added at once."""
        identity = self.identity if turn_id is None else self.identity.in_turn(turn_id)
        return Batch(self, cancel or CancelToken(), identity)

    # -- phase 1: preflight --------------------------------------------------------------

    def _preflight(self, index: int, call: ToolCall, identity: Identity) -> _Slot:
        slot = _Slot(index, call, identity=identity)
        try:
            slot.args = parse_arguments(call.arguments)
        except ArgumentsTooDeep as exc:
            slot.settled = (
                ToolResult.error(f'The arguments for "{call.name}" were refused: {exc}.'),
                Outcome.PREFLIGHT_REJECTED,
            )
            return slot
        except ArgumentsParseError as exc:
            slot.settled = (
                ToolResult.error(
                    f'The arguments for "{call.name}" are not valid JSON ({exc}). '
                    "Send the arguments as one JSON object and call it again."
                ),
                Outcome.PREFLIGHT_REJECTED,
            )
            return slot
        entry = self.registry.get(call.name)
        if entry is None:
            slot.settled = (
                ToolResult.error(self._missing_text(call.name)),
                Outcome.PREFLIGHT_REJECTED,
            )
            return slot
        slot.entry = entry
        for guard in self.guards:
            rejection = _safely(functools.partial(guard, call, entry), f"guard for {call.name}")
            if rejection:
                slot.settled = (ToolResult.error(rejection), Outcome.PREFLIGHT_REJECTED)
                return slot
        try:
            slot.args = entry.tool.parse_args(slot.args)
        except InvalidArguments as exc:
            slot.settled = (ToolResult.error(exc.message), Outcome.PREFLIGHT_REJECTED)
        except Exception as exc:
            slot.settled = (
                ToolResult.error(f'The arguments for "{call.name}" could not be checked: {exc}'),
                Outcome.PREFLIGHT_REJECTED,
            )
        return slot

    def _missing_text(self, name: str) -> str:
        for describer in self.missing:
            text = _safely(functools.partial(describer, name), "missing-tool describer")
            if text:
                return text
        close = difflib.get_close_matches(name, self.registry.names(), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return f'There is no tool named "{name}".{hint} Call one of the tools you were given.'

    # -- phase 2: prepare ----------------------------------------------------------------

    async def _prepare(self, slot: _Slot, calls: list[ToolCall], cancel: CancelToken) -> None:
        assert slot.entry is not None
        tool = slot.entry.tool
        try:
            resolution = await _awaited(tool.resolve(slot.args))
        except ToolError as exc:
            slot.settled = (ToolResult.error(exc.message), Outcome.RESOLUTION_FAILED)
            return
        except Exception as exc:
            log.debug("resolve failed for %s", slot.name, exc_info=True)
            slot.settled = (
                ToolResult.error(
                    f'Tool "{slot.name}" could not prepare the call: {_describe(exc)}'
                ),
                Outcome.RESOLUTION_FAILED,
            )
            return
        if isinstance(resolution, ToolResult):
            slot.settled = (resolution, Outcome.SYNTHETIC)
            return
        if not isinstance(resolution, ToolExecution):
            slot.settled = (
                ToolResult.error(
                    f'Tool "{slot.name}" resolved to a {type(resolution).__name__} instead of a '
                    "ToolExecution; this is a bug in the tool."
                ),
                Outcome.RESOLUTION_FAILED,
            )
            return
        slot.execution = resolution
        context = BeforeContext(
            slot.call, tool, slot.args, resolution, calls, cancel, slot.identity
        )
        for hook_id, hook in self.before:
            try:
                decision = await hook(context)
            except Exception as exc:
                log.debug("before-hook %s failed", hook_id, exc_info=True)
                slot.settled = (
                    ToolResult.error(
                        f'The check "{hook_id}" failed for "{slot.name}" ({_describe(exc)}), so '
                        "the call was not run."
                    ),
                    Outcome.VETOED,
                )
                return
            if isinstance(decision, Veto):
                slot.settled = (decision.result, Outcome.VETOED)
                return
            if isinstance(decision, Allow | Proceed) and decision.handoff is not None:
                slot.handoffs.append(decision.handoff)
            if isinstance(decision, Allow):
                break
        if cancel.cancelled:
            slot.settled = (ToolResult.error(cancelled_text(slot.name, cancel)), Outcome.CANCELLED)

    def _announce(self, slot: _Slot) -> None:
        execution = slot.execution
        self.events.emit(
            ToolCallStarted(
                slot.call.id,
                slot.name,
                slot.args,
                execution.description if execution and execution.description else None,
                execution.display if execution else None,
                slot.identity,
            )
        )

    # -- phase 3: execute ----------------------------------------------------------------

    async def _watch(self, cancel: CancelToken, running: set[_Slot]) -> None:
        await cancel.wait()
        await asyncio.sleep(self.grace_seconds)
        for slot in list(running):
            if slot.task is not None and not slot.task.done():
                slot.grace_expired = True
                slot.task.cancel()

    async def _execute(
        self, slot: _Slot, cancel: CancelToken, running: set[_Slot]
    ) -> tuple[ToolResult, Outcome]:
        if cancel.cancelled:
            return ToolResult.error(cancelled_text(slot.name, cancel)), Outcome.CANCELLED
        execution = slot.execution
        assert execution is not None
        slot.task = asyncio.current_task()
        running.add(slot)

        def report(update: ToolUpdate) -> None:
            if not cancel.cancelled:
                self.events.emit(ToolProgress(slot.call.id, slot.name, update, slot.identity))

        ctx = ToolContext(
            slot.call.id, cancel, report, handoffs=tuple(slot.handoffs), identity=slot.identity
        )
        slot.started_at = time.monotonic()
        try:
            result = coerce_result(slot.name, await _awaited(execution.execute(ctx)))
        except asyncio.CancelledError:
            if not slot.grace_expired:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            result = ToolResult.error(cancelled_text(slot.name, cancel))
        except ToolError as exc:
            log.debug("tool %s failed: %s", slot.name, exc.message)
            result = ToolResult.error(
                cancelled_text(slot.name, cancel) if cancel.cancelled else exc.message
            )
        except Exception as exc:
            log.debug("tool %s raised", slot.name, exc_info=True)
            text = (
                cancelled_text(slot.name, cancel)
                if cancel.cancelled
                else f'Tool "{slot.name}" failed: {_describe(exc)}'
            )
            result = ToolResult.error(text)
        finally:
            slot.finished_at = time.monotonic()
            running.discard(slot)
        return result, Outcome.EXECUTED

    # -- phase 4: finalize ---------------------------------------------------------------

    async def _execute_and_finalize(
        self, slot: _Slot, cancel: CancelToken, running: set[_Slot]
    ) -> CallResult:
        result, outcome = await self._execute(slot, cancel, running)
        return await self._finalize(slot, result, outcome)

    async def _finalize(self, slot: _Slot, result: ToolResult, outcome: Outcome) -> CallResult:
        result = normalize_result(slot.name, coerce_result(slot.name, result))
        result = await self._after_hooks(slot, result, outcome)
        result = self.spiller.apply(slot.name, slot.call.id, result)
        if result.delivery and self.injections is not None and not self.notices_on_results:
            # Only for an agent loop, which drains the channel: without one the caller
            # takes the delivery from the result, and the channel would only pile up.
            self.injections.push(SKILL_KIND, result.delivery)
        result = self._add_notices(result)
        execution = slot.execution
        record = CallResult(
            tool_call_id=slot.call.id,
            name=slot.name,
            args=slot.args,
            result=result,
            outcome=outcome,
            description=execution.description if execution else None,
            display=execution.display if execution else None,
            approval_rule=execution.approval_rule if execution else None,
            started_at=slot.started_at,
            finished_at=slot.finished_at,
        )
        self.events.emit(ToolCallFinished(slot.call.id, slot.name, record, slot.identity))
        return record

    def _add_notices(self, result: ToolResult) -> ToolResult:
        """Without an agent loop, what rides on results (task notices, from the legacy
        sources and the channel) goes on this one's note; with a loop, the legacy sources'
        notices go to the channel for it to drain."""
        messages: list[str] = []
        for source in tuple(self.notices):
            taken = _safely_list(source.take_notices, "notice source")
            messages += [notice.message for notice in taken]
        channel = self.injections
        if not self.notices_on_results and channel is not None:
            for message in messages:
                channel.push(TASK_FINISHED_KIND, message)
            return result
        if channel is not None:
            messages += [item.text for item in channel.drain(RESULT_KINDS.__contains__)]
        if not messages:
            return result
        return result.with_(note=with_notices(result.note, messages))

    async def _after_hooks(self, slot: _Slot, result: ToolResult, outcome: Outcome) -> ToolResult:
        if not len(self.after):
            return result
        tool = slot.entry.tool if slot.entry else None
        for hook_id, hook in self.after:
            context = AfterContext(
                slot.call, tool, slot.args, outcome, result, slot.execution, slot.identity
            )
            try:
                replacement = await hook(context)
            except Exception as exc:
                log.debug("after-hook %s failed", hook_id, exc_info=True)
                return ToolResult.error(
                    f'The after-call hook "{hook_id}" failed for "{slot.name}": {_describe(exc)}. '
                    "The tool's own output was withheld."
                )
            if replacement is not None:
                result = normalize_result(slot.name, coerce_result(slot.name, replacement))
        return result


class Batch:
    """One batch of calls that arrive one at a time (see `Executor.open_batch`).

    `add` does the preflight at once (no I/O) and queues the call; one worker prepares the
    calls strictly in arrival order (resolve, before-hooks, approvals, announcement) and
    hands each to the batch's scheduler as soon as it is prepared, so a call starts while
    later ones are still arriving, and never overtakes an earlier call it conflicts with.

    A call whose tool must be alone in its reply (trait `alone_in_reply`) is held, before
    it is prepared, until the batch is sealed (`seal()`, or `results()`): only then is it
    known whether the reply holds other calls, in which case it is refused (`alone.py`).
    The calls after it wait for it in the preparing order, as for any call.
    """

    def __init__(self, executor: Executor, cancel: CancelToken, identity: Identity) -> None:
        self._executor = executor
        self.cancel = cancel
        self.identity = identity
        self._calls: list[ToolCall] = []
        self._results: list[asyncio.Future[CallResult]] = []
        self._queue: asyncio.Queue[_Slot | None] = asyncio.Queue()
        self._scheduler = Scheduler()
        self._running: set[_Slot] = set()
        self._stopped_by: str | None = None
        self._closed = False
        self._sealed = asyncio.Event()
        self._shared: list[ToolCall] = []
        self._lookups = Lookups()
        """Real paths looked up by this batch's calls, until a call that may write."""
        BATCH_ROOM.enter()  # its calls live together until the end (collector.py)
        self._leave_room = weakref.finalize(self, BATCH_ROOM.leave)  # once, even if dropped
        executor.events.emit(BatchStarted(identity))
        self._worker = asyncio.ensure_future(self._prepare_in_order())
        self._watcher = asyncio.ensure_future(executor._watch(cancel, self._running))

    @property
    def calls(self) -> Sequence[ToolCall]:
        """The calls added so far, in order."""
        return self._calls

    def add(self, call: ToolCall) -> asyncio.Future[CallResult]:
        """Queue `call` (its arguments complete); returns the future of its result."""
        if self._closed:
            raise RuntimeError("this batch is closed: open a new one for more calls")
        slot = self._executor._preflight(len(self._calls), call, self.identity)
        self._calls.append(call)
        result: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        slot.result = result
        self._results.append(result)
        self._queue.put_nowait(slot)
        return result

    def seal(self, shared: Sequence[ToolCall] = ()) -> None:
        """Say the reply is complete: every call of it was added. `shared` are calls of
        the same reply the caller answers without adding them (an identical call sharing
        an earlier one's result); they count as calls of the reply all the same. No call
        may be added after this; `results()` seals the batch if this was not called."""
        if self._sealed.is_set():
            return
        self._closed = True
        self._shared = list(shared)
        self._sealed.set()
        self._queue.put_nowait(None)

    async def results(self) -> list[CallResult]:
        """Seal the batch and wait for every call; results in the order added."""
        self.seal()
        try:
            await self._worker
            return list(await asyncio.gather(*self._results))
        finally:
            self._watcher.cancel()
            self._leave_room()

    async def _prepare_in_order(self) -> None:
        while (slot := await self._queue.get()) is not None:
            try:
                inner = await self._admit(slot)
            except BaseException as exc:
                assert slot.result is not None
                if not slot.result.done():
                    slot.result.set_exception(exc)
                raise
            _chain(inner, slot.result)

    async def _admit(self, slot: _Slot) -> asyncio.Future[CallResult]:
        executor, cancel = self._executor, self.cancel
        if slot.settled is None and self._stopped_by is not None:
            slot.settled = (
                ToolResult.error(
                    f'Skipped: the earlier call to "{self._stopped_by}" ended this batch, so '
                    "this call was not run."
                ),
                Outcome.SKIPPED,
            )
        if slot.settled is None and slot.entry is not None and must_be_alone(slot.entry.tool):
            await self._until_sealed()
            refusal = None if cancel.cancelled else alone_refusal(slot.name, self._reply_names())
            if refusal is not None:
                slot.settled = (ToolResult.error(refusal), Outcome.VETOED)
        if slot.settled is None and cancel.cancelled:
            slot.settled = (ToolResult.error(cancelled_text(slot.name, cancel)), Outcome.CANCELLED)
        if slot.settled is None:
            assert slot.entry is not None
            traits = traits_of(slot.entry.tool)
            if traits is None or not traits.read_only:
                self._lookups.clear()  # it may change files: look at every path afresh
            with one_look(self._lookups):  # resolve and every check look each path up once
                await executor._prepare(slot, self._calls, cancel)
        executor._announce(slot)
        if slot.settled is not None:
            result, outcome = slot.settled
            if outcome in (Outcome.SYNTHETIC, Outcome.VETOED) and result.stop_turn:
                self._stopped_by = slot.name
            return asyncio.ensure_future(executor._finalize(slot, result, outcome))
        assert slot.execution is not None
        if slot.execution.stop_batch_after_this:
            self._stopped_by = slot.name
        # One task per call runs it and finalizes it; the call keeps its accesses until its
        # after-hooks are done (a formatter hook finishes before the next edit of the same
        # file starts).
        run = functools.partial(executor._execute_and_finalize, slot, cancel, self._running)
        traits = traits_of(slot.entry.tool) if slot.entry is not None else None
        if traits is None or not traits.read_only:
            run = functools.partial(self._then_look_afresh, run)
        return self._scheduler.submit(slot.execution.accesses, run)

    async def _then_look_afresh(self, run: Callable[[], Awaitable[CallResult]]) -> CallResult:
        """Run a call that may change files; the calls prepared after it ends look at
        every path afresh."""
        try:
            return await run()
        finally:
            self._lookups.clear()

    async def _until_sealed(self) -> None:
        """Return once every call of the reply is in (or the batch is cancelled)."""
        if self._sealed.is_set() or self.cancel.cancelled:
            return
        waits = {
            asyncio.ensure_future(self._sealed.wait()),
            asyncio.ensure_future(self.cancel.wait()),
        }
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def _reply_names(self) -> list[str]:
        """The names of every call of the reply: the batch's and those shared."""
        return [call.name for call in (*self._calls, *self._shared)]


def _chain(source: asyncio.Future[CallResult], target: asyncio.Future[CallResult] | None) -> None:
    """Settle `target` with whatever `source` ends with."""
    assert target is not None

    def settle(done: asyncio.Future[CallResult]) -> None:
        if target.done():
            return
        if done.cancelled():
            target.cancel()
        elif (exc := done.exception()) is not None:
            target.set_exception(exc)
        else:
            target.set_result(done.result())

    source.add_done_callback(settle)


async def _awaited(value: object) -> object:
    """The value, awaited if it is awaitable (tools may resolve sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _safely_list(fn: Callable[[], Sequence[Any]], what: str) -> Sequence[Any]:
    try:
        return fn()
    except Exception:
        log.exception("%s raised", what)
        return ()


def _safely(fn: Callable[[], str | None], what: str) -> str | None:
    try:
        return fn()
    except Exception:
        log.exception("%s raised", what)
        return None
