"""`Agent`: the loop that makes a model a coding agent over a `Runtime`.

A turn runs steps until the model replies without tool calls, a result ends the turn,
the step limit or a budget is reached, the provider fails for good, or the user cancels.
Each step drains the agent's injections into the conversation, fits the conversation to
the model's window, streams the reply and dispatches its calls as they complete
(`deftly.agent.step`), and records everything in the session's transcript, so a later
run can resume it.

    async with Runtime(".") as runtime:
        agent = Agent(runtime, OpenAIProvider(model="...", api_key="..."))
        result = await agent.run("fix the failing test")
        print(result.stop_reason, result.text)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from deftly.agent import events as ev
from deftly.agent.budgets import configured_budgets
from deftly.agent.held import hold, restore
from deftly.agent.history import project
from deftly.agent.prompt import PromptContext, build_system_prompt, git_status, read_instructions
from deftly.agent.render import system_block
from deftly.agent.repeats import RepeatWatch
from deftly.agent.step import Emit, Step, StepOutcome
from deftly.agent.watch import TurnSignal, watch_inbox
from deftly.contract.tool import CancelToken
from deftly.execution.events import Event, RuntimeNotice, ToolProgress
from deftly.features.disclosure.disclosure import DeferredTools
from deftly.features.skills.service import SkillService
from deftly.providers.base import ChatProvider, ProviderError
from deftly.providers.reply import collect
from deftly.providers.retry import RetryPolicy
from deftly.providers.types import ChatRequest, Message, TextPart, ThinkPart, ToolSpec, Usage
from deftly.session.turns import TurnBudget, TurnEnd, TurnStart

if TYPE_CHECKING:
    from deftly.agent.children import ChildrenFactory, ClosingBackend
    from deftly.agent.context import ContextKeeper
    from deftly.agent.scope import DrivenScope
    from deftly.agent.transcript import TranscriptWriter
    from deftly.runtime.agent_runtime import AgentRuntime

log = logging.getLogger(__name__)

INTERRUPTED = (
    "The previous turn was interrupted by the user before it was complete; any partial "
    "output above is unfinished. The user's next message continues the conversation."
)
FILTERED = (
    "The provider's safety filter blocked the model's reply. Rephrase the request, or "
    "try another model."
)
EMPTY_REPLY = "The model sent an empty reply (no text and no tool calls)."


@dataclass
class TurnResult:
    """How a turn went: its final text, why it stopped, its steps and tokens, the
    messages it added, and what went wrong when `stop_reason` is "error"."""

    text: str
    stop_reason: ev.StopReason
    steps: int
    usage: Usage
    session_id: str
    messages: list[Message] = field(default_factory=list)
    error: str | None = None
    origin: Mapping[str, object] = field(default_factory=dict)
    """Where the prompt came from when it was not typed (an inbox message's origin)."""
    usage_by_agent: Mapping[str, Usage] = field(default_factory=dict)
    """Tokens by agent when sub-agents ran: this agent's (`usage`) and each sub-agent's."""

    @property
    def total_usage(self) -> Usage:
        """Tokens of the whole turn, sub-agents included."""
        total = Usage()
        for usage in self.usage_by_agent.values():
            total += usage
        return total if self.usage_by_agent else self.usage


class Agent:
    """A model driving one agent scope: a runtime's main agent (see the module docstring),
    or a sub-agent's scope (`deftly.agent.children`).

    `provider`: the model (None: from the configuration's `[model]`, or the `[models.NAME]`
    profile or model id `model` names). `max_steps`: per turn (None: `[loop] max_steps`;
    0: no limit). `system_prompt` replaces the built one. `resume`: continue the
    session's transcript when it has one (`Runtime(session_id=...)` picks the session).
    `budgets`: more limits on a turn. `context_window`: tokens (None: the model's
    `context_window` setting). `delegates`: whether this agent may start sub-agents (the
    Agent tools), within `[agents] max_depth`; `depth` is how deep it is (0: the main
    agent). `close_provider`: whether `aclose` closes the provider (not when shared).
    `children_backend`: makes the backend its children run on (None: `LocalChildren`, in
    this process; `deftly.scale.children_backend(config)` gives the configured one).
    """

    def __init__(
        self,
        runtime: DrivenScope,
        provider: ChatProvider | None = None,
        *,
        model: str | None = None,
        max_steps: int | None = None,
        system_prompt: str | None = None,
        resume: bool = True,
        budgets: Sequence[TurnBudget] = (),
        context_window: int | None = None,
        delegates: bool = True,
        depth: int = 0,
        close_provider: bool = True,
        children_backend: ChildrenFactory | None = None,
    ) -> None:
        self._runtime = runtime
        self._children_factory = children_backend
        self._delegates = delegates
        self._depth = depth
        self._close_provider = close_provider
        self._children: ClosingBackend | None = None
        self._turn_usage: dict[str, Usage] = {}
        self._provider = provider
        self._model_name = model
        self._max_steps = max_steps
        self._system_override = system_prompt
        self._resume = resume
        self._context_window = context_window
        self.budgets: list[TurnBudget] = list(budgets)
        self._history: list[Message] = []
        self._usage = Usage()
        self._turns = 0
        self._started = False
        self._system = ""
        self._repeats = RepeatWatch()
        self._cancel: CancelToken | None = None
        self._lock = asyncio.Lock()
        self._turn_began = TurnSignal()
        self._transcript: TranscriptWriter | None = None
        self._context: ContextKeeper | None = None
        self._unsubscribe: list[object] = []
        self._queue: asyncio.Queue[ev.AgentEvent] | None = None
        self._turn_id = ""
        self._restored_prompt = (0, 0)

    # -- what a host reads ---------------------------------------------------------------

    @property
    def history(self) -> list[Message]:
        """The conversation so far (a copy)."""
        return list(self._history)

    @property
    def usage(self) -> Usage:
        """Tokens used by every request of this agent so far."""
        return self._usage

    @property
    def session_id(self) -> str:
        """The runtime's session (what `--resume` takes)."""
        return self._runtime.session_id

    @property
    def provider(self) -> ChatProvider:
        """The model this agent talks to."""
        if self._provider is None:
            self._provider = self._configured_provider()
        return self._provider

    @property
    def system_prompt(self) -> str:
        """The system prompt (built at start, then fixed for the session)."""
        return self._system

    def set_provider(self, provider: ChatProvider) -> None:
        """Talk to another model from the next step on (`/model`)."""
        self._provider = provider

    @property
    def agent_id(self) -> str:
        """The id of the agent this loop drives ("main", or a sub-agent's)."""
        return self._runtime.agent.agent_id

    @property
    def scope(self) -> AgentRuntime:
        """The agent scope this loop drives."""
        return self._runtime.agent

    @property
    def turn_id(self) -> str:
        """The running (or last) turn's id; empty before the first."""
        return self._turn_id

    def relay(self, event: ev.AgentEvent) -> None:
        """Pass a sub-agent's event on to whoever watches this agent's turn (dropped when
        no turn is watched); a sub-agent's end adds its tokens to the turn's."""
        if isinstance(event, ev.SubagentEnded):
            for agent_id, usage in event.usage_by_agent.items():
                self._turn_usage[agent_id] = self._turn_usage.get(agent_id, Usage()) + usage
        if self._queue is not None:
            self._queue.put_nowait(event)

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the runtime, build the system prompt, and load the session's transcript
        (idempotent; `run` and `stream` call it)."""
        if self._started:
            return
        await self._runtime.start()
        from deftly.agent.context import ContextKeeper
        from deftly.agent.transcript import TranscriptWriter, load_transcript, transcript_path

        runtime = self._runtime
        agent = runtime.agent
        agent.executor.notices_on_results = False  # this loop drains the injections
        self._unsubscribe.append(runtime.subscribe(self._forward))
        self._system = (
            self._system_override
            if self._system_override is not None
            else await asyncio.to_thread(self._build_prompt)
        )
        path = transcript_path(runtime.session_dir, agent.agent_id)
        if self._resume and path.exists():
            restored = await asyncio.to_thread(load_transcript, path)
            self._history = restored.messages
            self._usage = restored.usage
            self._turns = restored.turns
            self._restored_prompt = (restored.last_prompt_tokens, restored.prompt_covered)
            restore(runtime.session.store, agent.agent_id, agent.injections)
        config = runtime.config
        self._context = ContextKeeper(
            window=self._settings_window(),
            loop=config.loop,
            # beside the spilled outputs, which the model may Read without asking
            elided_dir=runtime.session_dir / "spill" / "elided",
            elided_view=runtime.session.spill_dir / "elided",
            state=agent.loop_hooks.state_text,
        )
        tokens, covered = self._restored_prompt
        if tokens:  # a measured start after a resume, not an estimate
            self._context.observe(Usage(input_tokens=tokens), covered)
        self._transcript = TranscriptWriter(path)
        self._install_children()
        self._started = True

    async def aclose(self) -> None:
        """Stop any turn, close the transcript and the provider (not the runtime)."""
        self.cancel()
        async with self._lock:
            pass
        for stop in self._unsubscribe:
            if callable(stop):
                stop()
        self._unsubscribe.clear()
        if self._children is not None:
            children, self._children = self._children, None
            if self._runtime.agent.subagents.backend is children:
                self._runtime.agent.subagents.backend = None
            await children.aclose()
        if self._started:
            agent = self._runtime.agent
            agent.executor.notices_on_results = True
            hold(self._runtime.session.store, agent.agent_id, agent.injections)
        if self._transcript is not None:
            self._transcript.close()
            self._transcript = None
        if self._provider is not None and self._close_provider:
            await self._provider.aclose()
        self._started = False

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- turns ---------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        cancel: CancelToken | None = None,
        origin: Mapping[str, object] | None = None,
        on_event: Callable[[ev.AgentEvent], None] | None = None,
    ) -> TurnResult:
        """Run one turn to its end and return how it went (`on_event` sees each event)."""
        result: TurnResult | None = None
        start = len(self._history)
        async for event in self.stream(prompt, cancel=cancel, origin=origin):
            if on_event is not None:
                on_event(event)
            if isinstance(event, ev.TurnEnded):
                result = TurnResult(
                    event.text,
                    event.stop_reason,
                    event.steps,
                    event.usage,
                    event.session_id,
                    self._history[start:],
                    event.error,
                    dict(origin or {}),
                    dict(event.usage_by_agent),
                )
        assert result is not None
        return result

    async def stream(
        self,
        prompt: str,
        *,
        cancel: CancelToken | None = None,
        origin: Mapping[str, object] | None = None,
    ) -> AsyncIterator[ev.AgentEvent]:
        """Run one turn, yielding its events as they happen; the last is `TurnEnded`.
        Leaving the loop early cancels the turn. `origin` says where an untyped prompt came
        from (an inbox message's origin; on `TurnStarted`)."""
        async with self._lock:
            self._turn_began.fire()
            await self.start()
            queue: asyncio.Queue[ev.AgentEvent] = asyncio.Queue()
            token = cancel or CancelToken()
            self._cancel, self._queue = token, queue
            turn = asyncio.ensure_future(
                self._turn(prompt, token, queue.put_nowait, dict(origin or {}))
            )
            try:
                while True:
                    event = await queue.get()
                    yield event
                    if isinstance(event, ev.TurnEnded):
                        break
                await turn
            finally:
                if not turn.done():
                    token.cancel("the turn's watcher stopped", by_user=True)
                    with contextlib.suppress(BaseException):
                        await turn
                self._cancel = self._queue = None

    def watch(
        self,
        prompt: str | None = None,
        *,
        on_event: Callable[[ev.AgentEvent], None] | None = None,
    ) -> AsyncIterator[TurnResult]:
        """Consume the agent's inbox: run `prompt` first when given, then one turn per
        inbox message (a cron job's prompt), each only while no other turn runs, yielding
        each turn's result; `on_event` sees every event. The inbox counts as consumed (its
        tools are offered) until the iteration ends; leaving it cancels a running turn."""
        return watch_inbox(self, self._runtime.agent.inbox, prompt, on_event)

    async def until_idle(self) -> None:
        """Return once no turn runs (at once, or when the running turn ends)."""
        async with self._lock:
            pass

    async def next_turn_begins(self) -> None:
        """Return when the next turn begins (`run` or `stream` takes the agent)."""
        await self._turn_began.wait()

    def cancel(self) -> None:
        """Cancel the running turn as the user (Ctrl-C): running tools get the executor's
        grace period and report cancelled; the turn ends with "cancelled"."""
        if self._cancel is not None:
            self._cancel.cancel("the user cancelled the turn", by_user=True)

    def clear(self) -> None:
        """Start a fresh conversation in the same session (`/clear`)."""
        self._history = []
        self._repeats.reset()
        if self._transcript is not None:
            self._transcript.replaced([], reason="clear")

    async def compact(self, instructions: str | None = None) -> ev.ContextChanged | None:
        """Compact the conversation now (`/compact`); returns what changed."""
        await self.start()
        assert self._context is not None
        fitted = await self._context.compact(
            self._system,
            self._history,
            self._tool_specs(),
            self._summarize,
            instructions=instructions,
        )
        return self._apply_fit(fitted, self._turn_id or "compact")

    # -- one turn ------------------------------------------------------------------------

    async def _turn(
        self, prompt: str, cancel: CancelToken, emit: Emit, origin: Mapping[str, object]
    ) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        self._turns += 1
        turn, turn_id = self._turns, f"turn-{self._turns}"
        self._turn_id = turn_id
        agent_id = self._runtime.agent.agent_id
        self._turn_usage = {}
        emit(ev.TurnStarted(agent_id, turn_id, prompt, origin))
        hooks = self._runtime.agent.loop_hooks
        hooks.turn_started(TurnStart(turn_id, prompt))
        self._repeats.reset()
        skills = self._runtime.agent.services.find(SkillService)
        if skills is not None:
            skills.nesting.reset()
        transcript = self._transcript
        assert transcript is not None and self._context is not None
        transcript.turn_started(turn, prompt)
        self._append(Message.user(prompt), turn, 0)
        limit = self._runtime.config.loop.max_steps if self._max_steps is None else self._max_steps
        policy = RetryPolicy(max_attempts=self._runtime.config.loop.max_attempts_per_step)
        steps, usage, attempt = 0, Usage(), 0
        text, error = "", None
        stop: ev.StopReason = "end_turn"
        compacted_for_overflow = False
        while True:
            if cancel.cancelled:
                stop = "cancelled"
                break
            if limit and steps >= limit:
                stop = "max_steps"
                self._runtime.agent.injections.push(
                    "loop",
                    f"The previous turn stopped after {steps} steps (its step limit) before "
                    "you finished; the user may ask you to go on.",
                )
                break
            reason = self._budget_reason(steps, usage, loop.time() - began)
            if reason is not None:
                stop, error = "budget", reason
                self._runtime.agent.injections.push("budget", reason)
                break
            specs = self._inject_and_shape(turn, steps)
            fitted = await self._context.fit(self._system, self._history, specs, self._summarize)
            self._apply_fit(fitted, turn_id)
            request = self._request(specs)
            sent = len(self._history)
            outcome = await self._step(request, cancel, emit, turn_id)
            usage += outcome.usage
            self._usage += outcome.usage
            self._context.observe(outcome.usage, sent)
            failure = outcome.error or self._empty(outcome)
            if failure is not None:
                if outcome.has_calls:  # what ran is kept: the next try goes on from there
                    steps += 1
                    self._record_step(outcome, turn, steps, emit, turn_id)
                if outcome.cancelled:
                    stop = "cancelled"
                    break
                if failure.kind == "context_overflow" and not compacted_for_overflow:
                    compacted_for_overflow = True
                    fitted = await self._context.compact(
                        self._system, self._history, specs, self._summarize
                    )
                    self._apply_fit(fitted, turn_id)
                    continue
                attempt += 1
                if policy.should_retry(failure, attempt):
                    delay = policy.delay(failure, attempt)
                    emit(ev.Retrying(agent_id, turn_id, attempt, delay, failure.message))
                    if await _cancelled_within(cancel, delay):
                        stop = "cancelled"
                        break
                    continue
                stop, error = "error", failure.message
                break
            attempt = 0
            steps += 1
            self._record_step(outcome, turn, steps, emit, turn_id)
            if outcome.assistant.text.strip():
                text = outcome.assistant.text
            if outcome.cancelled:
                stop = "cancelled"
                break
            if outcome.finish == "filtered":
                stop, error = "error", FILTERED
                break
            if not outcome.has_calls:
                stop = "end_turn"
                break
            if outcome.stop_turn:
                stop = "stop_turn"
                break
        if stop == "cancelled" and cancel.by_user:
            self._runtime.agent.injections.push("interrupted", INTERRUPTED)
        transcript.turn_ended(turn=turn, stop_reason=stop, steps=steps, usage=usage)
        hooks.turn_ended(TurnEnd(turn_id, stop, steps, usage, loop.time() - began))
        by_agent = {agent_id: usage, **self._turn_usage} if self._turn_usage else {}
        emit(
            ev.TurnEnded(
                agent_id,
                turn_id,
                stop,
                text,
                steps,
                usage,
                self._runtime.session_id,
                error,
                by_agent,
            )
        )

    async def _step(
        self, request: ChatRequest, cancel: CancelToken, emit: Emit, turn_id: str
    ) -> StepOutcome:
        step = Step(
            executor=self._runtime.agent.executor,
            provider=self.provider,
            emit=emit,
            agent_id=self._runtime.agent.agent_id,
            turn_id=turn_id,
            repeats=self._repeats,
            images=self.provider.capabilities.images_in_tool_results,
        )
        try:
            return await step.run(request, cancel)
        except ProviderError as exc:  # raised before the stream began
            return StepOutcome(Message("assistant"), error=exc)

    def _record_step(
        self, outcome: StepOutcome, turn: int, step: int, emit: Emit, turn_id: str
    ) -> None:
        self._append(outcome.assistant, turn, step)
        for message in outcome.results:
            self._append(message, turn, step)
        assert self._transcript is not None
        self._transcript.step_ended(
            turn=turn, step=step, usage=outcome.usage, finish_reason=outcome.finish
        )
        emit(
            ev.StepEnded(self._runtime.agent.agent_id, turn_id, step, outcome.finish, outcome.usage)
        )

    def _empty(self, outcome: StepOutcome) -> ProviderError | None:
        """An empty reply (no text, no calls) is a provider failure worth another try."""
        if outcome.cancelled or outcome.has_calls or outcome.finish in ("filtered", "max_tokens"):
            return None
        if outcome.assistant.text.strip():
            return None
        thinking = any(isinstance(p, ThinkPart) for p in outcome.assistant.parts)
        what = " (reasoning only)" if thinking else ""
        return ProviderError(f"{EMPTY_REPLY}{what}", kind="empty")

    # -- the request ---------------------------------------------------------------------

    def _inject_and_shape(self, turn: int, step: int) -> list[ToolSpec]:
        """The tools for the next request; what the model must hear first (injections,
        the deferred-tool announcement) becomes one harness message in the history."""
        shaped = self._runtime.model_tools()
        texts = [item.text for item in self._runtime.agent.injections.drain()]
        if shaped.announcement:
            texts.insert(0, shaped.announcement)
        if texts:
            message = Message(
                "user", tuple(TextPart(system_block(t)) for t in texts), meta={"injected": True}
            )
            self._append(message, turn, step)
        return [ToolSpec(t.name, t.description, t.parameters) for t in shaped.tools]

    def _tool_specs(self) -> list[ToolSpec]:
        return [ToolSpec(t.name, t.description, t.parameters) for t in self._runtime.tools()]

    def _request(self, specs: Sequence[ToolSpec]) -> ChatRequest:
        # Output limit, temperature and effort are the provider's own settings.
        return ChatRequest(self._system, project(self._history), specs)

    async def _summarize(self, request: ChatRequest) -> str:
        """One tool-less request, with the loop's retries: the compaction summary."""
        policy = RetryPolicy(max_attempts=self._runtime.config.loop.max_attempts_per_step)
        for attempt in itertools.count(1):
            try:
                reply = await collect(self.provider.stream(request))
                return reply.message.text
            except ProviderError as exc:
                if not policy.should_retry(exc, attempt):
                    raise
                await asyncio.sleep(policy.delay(exc, attempt))
        raise AssertionError("unreachable")

    def _apply_fit(self, fitted: object, turn_id: str) -> ev.ContextChanged | None:
        from deftly.agent.context import Fitted

        assert isinstance(fitted, Fitted)
        if fitted.change is None:
            return None
        self._history = list(fitted.messages)
        if self._transcript is not None:
            self._transcript.replaced(self._history, reason=fitted.change)
        if fitted.change == "compacted":
            deferred = self._runtime.agent.services.find(DeferredTools)
            if deferred is not None:
                deferred.reset()
        event = ev.ContextChanged(
            self._runtime.agent.agent_id,
            turn_id,
            fitted.change,
            fitted.tokens_before,
            fitted.detail,
        )
        if self._queue is not None:
            self._queue.put_nowait(event)
        return event

    # -- helpers -------------------------------------------------------------------------

    def _append(self, message: Message, turn: int, step: int) -> None:
        self._history.append(message)
        if self._transcript is not None:
            self._transcript.message(message, turn=turn, step=step)

    def _budget_reason(self, steps: int, usage: Usage, seconds: float) -> str | None:
        """The first reason to end the turn: `[loop]`'s budgets, the host's, then the
        features' (a goal's budget)."""
        for budget in [*configured_budgets(self._runtime.config.loop), *self.budgets]:
            reason = budget.exceeded(steps=steps, usage=usage, seconds=seconds)
            if reason:
                return reason
        return self._runtime.agent.loop_hooks.exceeded(steps=steps, usage=usage, seconds=seconds)

    def _forward(self, event: Event) -> None:
        """Runtime events of this agent that a watcher of the turn should see."""
        queue = self._queue
        if queue is None:
            return
        agent_id = self._runtime.agent.agent_id
        if isinstance(event, ToolProgress):
            if event.identity.agent_id == agent_id and event.update.text:
                queue.put_nowait(
                    ev.ToolProgress(
                        agent_id, self._turn_id, event.call_id, event.name, event.update.text
                    )
                )
        elif isinstance(event, RuntimeNotice) and (
            event.identity.agent_id == agent_id or (not event.identity.agent_id and not self._depth)
        ):  # the session's own notices reach the main agent's watchers only (no repeats)
            queue.put_nowait(ev.Notice(agent_id, self._turn_id, event.kind, event.message))

    def _install_children(self) -> None:
        """Let this agent start sub-agents, where it may and the depth bound allows."""
        if not self._delegates or self._depth >= self._runtime.config.agents.max_depth:
            return
        desk = self._runtime.agent.subagents
        if desk.backend is not None:
            return  # a host's own backend stays
        from deftly.agent.children import LocalChildren

        factory = self._children_factory or LocalChildren
        self._children = factory(self, self._runtime.agent, self._depth)
        desk.backend = self._children

    def _settings_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        if self._provider is None or self._model_name is not None:
            from deftly.agent.models import resolve_model

            return resolve_model(self._runtime.config, self._model_name).context_window
        return self._runtime.config.model.context_window

    def _configured_provider(self) -> ChatProvider:
        from deftly.agent.models import make_provider, resolve_model

        return make_provider(resolve_model(self._runtime.config, self._model_name))

    def _build_prompt(self) -> str:
        runtime = self._runtime
        probe = runtime.session.env.path_probe()
        workspace = runtime.workspace
        skills = runtime.agent.services.find(SkillService)
        return build_system_prompt(
            PromptContext(
                workspace=workspace.root,
                additional_dirs=tuple(workspace.additional_dirs),
                today=date.today(),
                git_status=git_status(workspace.root, probe),
                instructions=read_instructions(workspace.root, probe),
                skills=skills.model_listing() if skills is not None else "",
            )
        )


async def _cancelled_within(cancel: CancelToken, seconds: float) -> bool:
    """Wait `seconds`, or less if `cancel` fires; whether it did."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(cancel.wait(), seconds)
    return cancel.cancelled
