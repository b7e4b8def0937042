"""`deftly serve`: a runtime's tools as an MCP server (the SDK's low-level `Server`).

Every `tools/call` becomes one call through the runtime's executor, the same pipeline as
everything else: validation, path policy, permissions, hooks, output budget. While it runs,
the call's progress events become MCP progress notifications; when the client cancels the
request, the call's cancel token fires and the tool stops.

Approval questions reach the client's user in one of two ways, depending on the protocol
version the client speaks:

- handshake era (≤ 2025-11-25): an `elicitation/create` request sent back to the client in
  the middle of the call;
- 2026-07-28 and later: the call answers `InputRequiredResult` (the question and an opaque
  `request_state`) and stays parked; the client retries with the user's answer and the same
  `request_state`, and the parked call continues where it stopped.

The same retry carries what must be known before a call may run at all (a `CallPreflight`:
`deftly serve` asks a 2026-07-28 client for its roots this way, in its first call).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import secrets
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import mcp.types as mt
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from deftly.contract.schema import JsonSchema
from deftly.contract.tool import BaseTool, CancelToken, ToolUpdate, tool_title
from deftly.contract.traits import ToolTraits, traits_of
from deftly.execution.calls import CallResult, ToolCall
from deftly.execution.events import Event, EventListener, RuntimeNotice, ToolProgress
from deftly.features.mcp.connection import deftly_version
from deftly.features.mcp.content import to_mcp_content
from deftly.features.notify.notification import Notification
from deftly.registry.registry import ToolRegistry
from deftly.serve.approval import ElicitationApprover
from deftly.serve.clients import Client, Clients
from deftly.serve.early import EarlyListing
from deftly.serve.inbox import InboxRelay
from deftly.serve.logging import LIST_CHANGING, passes, route_of
from deftly.serve.questions import ElicitationAnswerer
from deftly.session.inbox import Inbox

log = logging.getLogger(__name__)

MAX_PROGRESS_MESSAGE = 1_000
FLUSH_SECONDS = 2.0
ALL_CHANGES = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
LISTEN_EVENTS: dict[str, Callable[[], ServerEvent]] = {
    "tools": ToolsListChanged,
    "resources": ResourcesListChanged,
    "prompts": PromptsListChanged,
}
"""The `subscriptions/listen` event of each kind of list change (2026-07-28 clients)."""


class _Server(Server[Any]):
    """The SDK's server, declaring that its tool, prompt and resource lists change (mounted
    servers connect late) on every transport, not only where options are passed in."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, with every list declared as changing."""
        return super().create_initialization_options(
            notification_options or ALL_CHANGES, experimental_capabilities, extensions
        )


class ServedTool(Protocol):
    """What the server lists of one tool: its name, description and input schema."""

    @property
    def name(self) -> str:
        """The tool's name in `tools/list`."""
        ...

    @property
    def description(self) -> str:
        """The description the client's model reads."""
        ...

    @property
    def parameters(self) -> JsonSchema:
        """The JSON schema of the tool's arguments."""
        ...


class ToolHost(Protocol):
    """What the server needs from a runtime (the mcp layer does not import the runtime)."""

    @property
    def registry(self) -> ToolRegistry:
        """The tools behind `tools()` (for their traits and annotations)."""
        ...

    def tools(self) -> Sequence[ServedTool]:
        """The tools to list, in order."""
        ...

    def start_batch(
        self, calls: Sequence[ToolCall], *, cancel: CancelToken
    ) -> asyncio.Future[list[CallResult]]:
        """Start the calls through the executor (one per `tools/call`), stopping when
        `cancel` fires; the future holds their results."""
        ...

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Listen to the runtime's events (progress, notices); returns the function that stops
        it."""
        ...


class PromptSource(Protocol):
    """`prompts/list` and `prompts/get` (skills, and mounted servers' prompts)."""

    async def list_prompts(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListPromptsResult:
        """Every prompt on offer."""
        ...

    async def get_prompt(self, ctx: Any, params: mt.GetPromptRequestParams) -> mt.GetPromptResult:
        """One prompt, rendered with its arguments."""
        ...


class ResourceSource(Protocol):
    """`resources/list`, `resources/templates/list` and `resources/read`."""

    async def list_resources(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourcesResult:
        """Every resource on offer."""
        ...

    async def list_templates(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourceTemplatesResult:
        """The URI templates of resources that are not listed one by one."""
        ...

    async def read_resource(
        self, ctx: Any, params: mt.ReadResourceRequestParams
    ) -> mt.ReadResourceResult:
        """One resource's contents."""
        ...


def annotations_for(tool: BaseTool) -> mt.ToolAnnotations:
    """What the tool declares, as MCP hints; a mounted MCP tool passes its server's on."""
    passed_on = getattr(tool, "annotations", None)
    if isinstance(passed_on, mt.ToolAnnotations):
        return passed_on
    traits = traits_of(tool) or ToolTraits()
    return mt.ToolAnnotations(
        read_only_hint=traits.read_only,
        destructive_hint=traits.destructive and not traits.read_only,
        idempotent_hint=traits.idempotent,
        open_world_hint=traits.open_world,
    )


def client_can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client of this request can ask its user a question with a form, in its
    protocol version."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities else None
    if elicitation is None:
        return False
    if elicitation.url is not None and elicitation.form is None:
        return False  # URL-only clients cannot show a form
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


@dataclass(eq=False)
class _Ask:
    key: str
    request: mt.ElicitRequest
    answer: asyncio.Future[mt.ElicitResult | None]


@dataclass(eq=False)
class CallChannel:
    """One MCP `tools/call` and its way back to the client (progress, questions)."""

    call_id: str
    tool: str
    ctx: ServerRequestContext[Any]
    cancel: CancelToken = field(default_factory=CancelToken)
    task: asyncio.Future[list[CallResult]] | None = None
    progress: list[ToolUpdate] = field(default_factory=list)
    """Progress not sent yet: sent by a pump that exists only while a request is being
    answered and there is something to send (most calls report none)."""
    pump: asyncio.Task[None] | None = None
    driving: bool = False
    asks: list[_Ask] = field(default_factory=list)
    """Questions for the client's user not handed to a request yet."""
    waiter: asyncio.Future[_Ask | None] | None = None
    """Set while a request waits for the call: woken by its end (None) or by a question."""
    last_progress: float = 0.0
    _asked: int = 0

    def ask(self, ask: _Ask) -> None:
        """Hand a question to the request waiting for this call (or to the next one)."""
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(ask)
        else:
            self.asks.append(ask)

    @property
    def modern(self) -> bool:
        """Whether the client speaks a protocol version (2026-07-28 or later) in which a question is
        answered by retrying the call, not by a request back to the client."""
        return self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def can_elicit(self) -> bool:
        """Whether this client can ask its user a question with a form, in its protocol version."""
        return client_can_elicit(self.ctx)

    async def elicit(
        self, message: str, schema: dict[str, Any], patience: float
    ) -> mt.ElicitResult | None:
        """Ask the client's user `message` with a form of `schema`: the answer, or None when nobody
        answered within `patience` seconds or the call was cancelled."""
        if self.modern:
            self._asked += 1
            answer: asyncio.Future[mt.ElicitResult | None] = (
                asyncio.get_running_loop().create_future()
            )
            request = mt.ElicitRequest(
                params=mt.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            self.ask(_Ask(f"approval_{self._asked}", request, answer))
            waiting: asyncio.Future[Any] = answer
        else:
            waiting = asyncio.ensure_future(
                self.ctx.session.elicit_form(
                    message, schema, related_request_id=self.ctx.request_id
                )
            )
        stopped = asyncio.ensure_future(self.cancel.wait())
        try:
            done, _ = await asyncio.wait(
                {waiting, stopped}, timeout=patience, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopped.cancel()
        if waiting not in done:
            waiting.cancel()
            return None
        try:
            result = waiting.result()
        except Exception as exc:
            log.info("asking the MCP client's user failed: %s", exc)
            return None
        return result if isinstance(result, mt.ElicitResult) else None

    def next_progress(self, update: ToolUpdate) -> tuple[float, float | None, str | None]:
        """Progress must grow with every notification, whatever the tool reports."""
        if update.progress is not None and update.progress > self.last_progress:
            value, total = float(update.progress), update.total
        else:
            value, total = self.last_progress + 1, None
        self.last_progress = value
        message = (update.text or "").strip() or None
        if message and len(message) > MAX_PROGRESS_MESSAGE:
            message = "…" + message[-MAX_PROGRESS_MESSAGE:]
        return value, total, message


class CallPreflight(Protocol):
    """What a tool call needs from the client before it runs (for `deftly serve`: the
    client's roots, which say where the call runs)."""

    async def needs(self, ctx: ServerRequestContext[Any]) -> dict[str, mt.InputRequest] | None:
        """The requests to embed in an `InputRequiredResult` before this call runs, or None
        to run it now (after waiting, bounded, for anything already on its way)."""
        ...

    async def answered(
        self, ctx: ServerRequestContext[Any], responses: Mapping[str, mt.InputResponse]
    ) -> None:
        """The client's answers to `needs`, given when it retries the call."""
        ...


@dataclass(eq=False)
class _Parked:
    channel: CallChannel
    ask: _Ask
    timer: asyncio.TimerHandle


class ToolServer:
    """Serves a runtime's active tools over MCP."""

    def __init__(
        self,
        host: ToolHost,
        *,
        approver: ElicitationApprover | None = None,
        answerer: ElicitationAnswerer | None = None,
        name: str = "deftly",
        instructions: str | None = None,
        answer_timeout: float = 600.0,
        prompts: PromptSource | None = None,
        resources: ResourceSource | None = None,
        inbox: Inbox | None = None,
        early: EarlyListing | None = None,
    ) -> None:
        self.host = host
        self._early = early
        """What `tools/list` answers until the runtime is up (`early.py`); None after."""
        self.answer_timeout = answer_timeout
        self._ids = itertools.count(1)
        self._channels: dict[str, CallChannel] = {}
        self._parked: dict[str, _Parked] = {}
        self._preflights: dict[str, asyncio.TimerHandle] = {}
        """The `request_state` of calls asked for their preflight answers, not retried yet."""
        self._background: set[asyncio.Future[Any]] = set()
        self.clients = Clients()
        """Who is connected: list changes and log messages go to them."""
        self.bus = InMemorySubscriptionBus()
        """List changes for 2026-07-28 clients, which hear them on `subscriptions/listen`."""
        self._listen = ListenHandler(self.bus)
        self._listed: tuple[str, ...] | None = None
        """The tool names last listed, to tell clients when the list changes."""
        self._listed_for: ServerRequestContext[Any] | None = None
        self._check_due = False
        self.on_first_request: Callable[[ServerRequestContext[Any]], None] | None = None
        """Called once, at the first client request."""
        self.on_listed: Callable[[], None] | None = None
        """Called each time a `tools/list` answer is ready (`deftly serve` then builds
        its runtime, when it answered from the early listing)."""
        self.preflight: CallPreflight | None = None
        """Asked before each new tool call (`deftly serve`: the client's roots)."""
        if approver is not None:
            approver.bind(self._channels.get)
        if answerer is not None:
            answerer.bind(self._channels.get)
        with warnings.catch_warnings():  # logging is deprecated in 2026-07-28, still read
            warnings.simplefilter("ignore")
            self.server: Server[Any] = _Server(
                name,
                version=deftly_version(),
                instructions=instructions,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                get_tool_input_schema=self._input_schema,
                on_list_prompts=prompts.list_prompts if prompts else None,
                on_get_prompt=prompts.get_prompt if prompts else None,
                on_list_resources=resources.list_resources if resources else None,
                on_list_resource_templates=resources.list_templates if resources else None,
                on_read_resource=resources.read_resource if resources else None,
                on_set_logging_level=self._set_level,
                on_subscriptions_listen=self._listen_stream,
            )
        self._unsubscribe = host.subscribe(self._on_event)
        self._relay: InboxRelay | None = None
        if inbox is not None:  # the agent's inbox, handed to the client (a running loop)
            self._relay = InboxRelay(inbox, self._log, self.clients.connected)
            self._relay.start()

    def seen(self, ctx: ServerRequestContext[Any]) -> Client:
        """Record a request or notification of a client: from then on it is told things."""
        first = not self.clients.connected.is_set()
        client = self.clients.seen(ctx)
        if first and self.on_first_request is not None:
            self.on_first_request(ctx)
        return client

    async def _listen_stream(
        self, ctx: ServerRequestContext[Any], params: mt.SubscriptionsListenRequestParams
    ) -> mt.SubscriptionsListenResult:
        """`subscriptions/listen`: the stream on which a 2026-07-28 client hears list
        changes (the SDK's handler, fed by `changed`)."""
        self.seen(ctx)
        return await self._listen(ctx, params)

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: mt.SetLevelRequestParams
    ) -> mt.EmptyResult:
        """`logging/setLevel`: this client gets messages at `params.level` and above."""
        self.seen(ctx).level = params.level
        return mt.EmptyResult()

    # -- listing -------------------------------------------------------------------------

    def tool_definitions(self, client: ServerRequestContext[Any] | None = None) -> list[mt.Tool]:
        """`tools/list`: every tool of the runtime with its schema and MCP annotations, leaving out
        the tools about the tool list (MCP clients do their own disclosure) and, when the
        requesting `client` cannot show a form, the tools that ask the user."""
        out: list[mt.Tool] = []
        can_ask = client is None or client_can_elicit(client)
        if self._early is not None:
            return self._early.definitions(can_ask)
        for info in self.host.tools():
            entry = self.host.registry.get(info.name)
            traits = traits_of(entry.tool) if entry is not None else None
            if traits is not None and traits.discloses_tools:
                continue  # MCP clients do their own tool disclosure
            if traits is not None and traits.asks_user and not can_ask:
                continue  # nobody at this client could answer
            tool = entry.tool if entry is not None else None
            out.append(
                mt.Tool(
                    name=info.name,
                    title=tool_title(tool) if tool is not None else None,
                    description=info.description,
                    input_schema=info.parameters,
                    output_schema=dict(tool.output_schema)
                    if tool is not None and tool.output_schema
                    else None,
                    annotations=annotations_for(tool) if tool is not None else None,
                )
            )
        return out

    def listing(self, instructions: str | None, *, mounted: bool = False) -> EarlyListing:
        """What `tools/list` says now, to be said early by the next start (`early.py`);
        mounted servers' tools are left out (they join when their server connects) unless
        `mounted`."""
        registry = self.host.registry
        entries = {name: registry.get(name) for name in registry.names()}
        asks = [
            name
            for name, entry in entries.items()
            if entry is not None
            and (traits := traits_of(entry.tool)) is not None
            and traits.asks_user
        ]
        own = [
            tool
            for tool in self.tool_definitions()
            if mounted or (entry := entries.get(tool.name)) is None or entry.source != "mcp"
        ]
        return EarlyListing.of(own, asks, instructions)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        self.seen(ctx)
        tools = self.tool_definitions(ctx)
        self._listed = tuple(t.name for t in tools)
        self._listed_for = ctx
        if self.on_listed is not None:
            self.on_listed()
        return mt.ListToolsResult(tools=tools)

    async def replace_host(self, host: ToolHost, *, inbox: Inbox | None = None) -> None:
        """Serve another runtime's tools from now on (the workspace changed, or the runtime
        an early start was building is up); calls in flight finish on the old one. Clients
        are told the tool list changed, unless the early listing said just this. `inbox`:
        the new runtime's agent inbox, relayed from now on instead of the old one's."""
        self._unsubscribe()
        self.host = host
        self._unsubscribe = host.subscribe(self._on_event)
        if self._relay is not None:
            await self._relay.aclose()  # a message not sent yet stays in the old inbox
            self._relay = None
        if inbox is not None:
            self._relay = InboxRelay(inbox, self._log, self.clients.connected)
            self._relay.start()
        early, self._early = self._early, None
        if early is None or not early.same_as(self.listing(None, mounted=True)):
            self.changed("tools")

    # -- list changes --------------------------------------------------------------------

    def changed(self, kind: str) -> None:
        """The tools, resources or prompts changed (`kind`): tell every client, in the
        background (callable from any code on the loop)."""
        if kind == "tools":
            self._listed = None
        send = {
            "tools": lambda s: s.send_tool_list_changed(),
            "resources": lambda s: s.send_resource_list_changed(),
            "prompts": lambda s: s.send_prompt_list_changed(),
        }.get(kind)
        event = LISTEN_EVENTS.get(kind)
        if send is None or event is None:
            return
        with contextlib.suppress(RuntimeError):  # no loop: nobody to tell
            loop = asyncio.get_running_loop()
            self._keep(loop.create_task(self.clients.tell(send)))  # handshake era
            self._keep(loop.create_task(self.bus.publish(event())))  # listen streams

    def _check_soon(self) -> None:
        """Something happened that may change the tools on offer (a notice: a mode switch,
        a server's news): compare with the last listing once the loop is free. Not after
        every call: listing costs more than a small call."""
        if self._check_due or self._listed is None:
            return
        with contextlib.suppress(RuntimeError):  # no loop: nobody to tell
            asyncio.get_running_loop().call_soon(self._check_tool_list)
            self._check_due = True

    def _check_tool_list(self) -> None:
        self._check_due = False
        if self._listed is None:
            return
        now = tuple(t.name for t in self.tool_definitions(self._listed_for))
        if now != self._listed:
            self.changed("tools")

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        entry = self.host.registry.get(name)
        return entry.tool.parameters if entry else None

    # -- calling -------------------------------------------------------------------------

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        self.seen(ctx)
        state = params.request_state
        if state is not None and state in self._preflights:
            self._preflights.pop(state).cancel()
            if self.preflight is not None:
                await self.preflight.answered(ctx, params.input_responses or {})
        elif state is not None:
            return await self._resume(ctx, params)
        elif self.preflight is not None:
            needs = await self.preflight.needs(ctx)
            if needs:
                return self._ask_first(needs)
        channel = CallChannel(f"mcp_{next(self._ids)}", params.name, ctx)
        self._channels[channel.call_id] = channel
        call = ToolCall(channel.call_id, channel.tool, params.arguments or {})
        channel.task = self.host.start_batch([call], cancel=channel.cancel)
        channel.task.add_done_callback(functools.partial(self._forget, channel.call_id))
        return await self._drive(channel)

    def _forget(self, call_id: str, task: asyncio.Future[list[CallResult]]) -> None:
        """A call ended: its progress and questions have nowhere to go any more."""
        self._channels.pop(call_id, None)

    async def _drive(self, channel: CallChannel) -> mt.CallToolResult | mt.InputRequiredResult:
        """Wait for the call to finish, or to need an answer from the client's user."""
        task = channel.task
        assert task is not None
        channel.driving = True
        if channel.progress:
            self._start_pump(channel)
        try:
            if channel.asks:
                return self._park(channel, channel.asks.pop(0))
            if not task.done():
                waiter = channel.waiter = asyncio.get_running_loop().create_future()
                wake = functools.partial(_wake, waiter)
                task.add_done_callback(wake)
                try:
                    ask = await waiter
                finally:
                    channel.waiter = None
                    task.remove_done_callback(wake)
                if ask is not None and not task.done():
                    return self._park(channel, ask)
                if ask is not None:
                    channel.asks.insert(0, ask)
        except asyncio.CancelledError:
            channel.cancel.cancel("the MCP client cancelled the request", by_user=True)
            self._keep(task)
            raise
        finally:
            channel.driving = False
            if channel.pump is not None:
                channel.pump.cancel()
                channel.pump = None
        await self._flush_progress(channel)
        try:
            [result] = task.result()
        except Exception as exc:  # no runtime to run it (its build failed: early.py)
            log.debug("call %s could not run", channel.call_id, exc_info=True)
            text = f"The call could not run: {exc}"
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text=text)], is_error=True
            )
        return self._result(result)

    def _ask_first(self, needs: dict[str, mt.InputRequest]) -> mt.InputRequiredResult:
        """Answer a call that cannot run yet with what it needs; its retry runs it."""
        state = secrets.token_urlsafe(24)
        loop = asyncio.get_running_loop()
        self._preflights[state] = loop.call_later(
            self.answer_timeout, self._preflights.pop, state, None
        )
        return mt.InputRequiredResult(input_requests=needs, request_state=state)

    def _park(self, channel: CallChannel, ask: _Ask) -> mt.InputRequiredResult:
        state = secrets.token_urlsafe(24)
        timer = asyncio.get_running_loop().call_later(self.answer_timeout, self._expire, state)
        self._parked[state] = _Parked(channel, ask, timer)
        return mt.InputRequiredResult(input_requests={ask.key: ask.request}, request_state=state)

    def _expire(self, state: str) -> None:
        parked = self._parked.pop(state, None)
        if parked is None:
            return
        if not parked.ask.answer.done():
            parked.ask.answer.set_result(None)
        if parked.channel.task is not None:
            self._keep(parked.channel.task)

    async def _resume(
        self, ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        parked = self._parked.get(params.request_state or "")
        if parked is None or parked.channel.tool != params.name:
            return mt.CallToolResult(
                content=[
                    mt.TextContent(
                        type="text",
                        text=f'This answer for "{params.name}" came too late or does not match '
                        "a waiting call, so it was ignored. Call the tool again.",
                    )
                ],
                is_error=True,
            )
        del self._parked[params.request_state or ""]
        parked.timer.cancel()
        channel = parked.channel
        channel.ctx = ctx
        answer = (params.input_responses or {}).get(parked.ask.key)
        if not parked.ask.answer.done():
            parked.ask.answer.set_result(answer if isinstance(answer, mt.ElicitResult) else None)
        return await self._drive(channel)

    @staticmethod
    def _result(call: CallResult) -> mt.CallToolResult:
        structured = call.result.structured
        return mt.CallToolResult(
            content=to_mcp_content(call.result),
            structured_content=dict(structured) if structured is not None else None,
            is_error=call.is_error,
        )

    def _keep(self, task: asyncio.Future[Any]) -> None:
        """Let a call the client gave up on finish (cancelling) in the background."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- progress ------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ToolProgress):
            channel = self._channels.get(event.call_id)
            if channel is not None:
                channel.progress.append(event.update)
                if channel.driving and channel.pump is None:
                    self._start_pump(channel)
        elif isinstance(event, RuntimeNotice):
            if event.kind in LIST_CHANGING:
                self._check_soon()
            route = route_of(event)
            if route is None or not self._wanted(route.level):
                return
            note = event.data
            if isinstance(note, Notification) and (self._channels or self.clients.all()):
                note.delivered(f"an MCP log message to the client (logger {route.logger})")
            self.log_soon(route.logger, event.message, route.level)

    def _wanted(self, level: mt.LoggingLevel) -> bool:
        """Whether any client would take a message at `level` (else it is not formatted)."""
        return any(passes(level, c.level) for c in self.clients.all())

    def log_soon(self, logger: str, message: str, level: mt.LoggingLevel = "info") -> None:
        """Send a log message in the background (callable from any code on the loop)."""
        with contextlib.suppress(RuntimeError):  # no loop: nobody to tell
            self._keep(asyncio.get_running_loop().create_task(self._log(logger, message, level)))

    async def _log(self, logger: str, message: str, level: mt.LoggingLevel = "info") -> None:
        """A notice as an MCP log message (`notifications/message`) to every client whose
        level lets it through: on a call in flight when there is one (2026-07-28 clients
        take log messages only there, and only when they asked for them), else on the
        client's connection."""
        live = next(iter(self._channels.values()), None)
        busy = self.clients.get(live.ctx) if live is not None else None
        targets = [(c.ctx, c.level) for c in self.clients.all() if c is not busy]
        if live is not None:
            targets.insert(0, (live.ctx, busy.level if busy else None))
        for ctx, threshold in targets:
            if not passes(level, threshold):
                continue
            try:
                with warnings.catch_warnings():  # deprecated in 2026-07-28, still what's read
                    warnings.simplefilter("ignore")
                    await ctx.session.send_log_message(level, message, logger=logger)
            except Exception as exc:
                log.debug("could not send a log message to the client: %s", exc)

    async def _send_progress(self, channel: CallChannel, update: ToolUpdate) -> None:
        value, total, message = channel.next_progress(update)
        try:
            await channel.ctx.session.report_progress(value, total, message)
        except Exception as exc:
            log.debug("could not send progress for %s: %s", channel.call_id, exc)

    def _start_pump(self, channel: CallChannel) -> None:
        channel.pump = asyncio.get_running_loop().create_task(self._pump_progress(channel))

    async def _pump_progress(self, channel: CallChannel) -> None:
        """Send what is queued, then end (the next progress starts a new pump)."""
        try:
            while channel.progress:
                await self._send_progress(channel, channel.progress.pop(0))
        finally:
            if channel.pump is asyncio.current_task():
                channel.pump = None

    async def _flush_progress(self, channel: CallChannel) -> None:
        if not channel.progress:
            return  # most calls: no timer to set up
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FLUSH_SECONDS):
                while channel.progress:
                    await self._send_progress(channel, channel.progress.pop(0))

    # -- shutdown ------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Answer what is still parked, let calls in flight finish cancelling."""
        if self._relay is not None:
            await self._relay.aclose()
        self._listen.close()
        self._unsubscribe()
        for state in list(self._parked):
            self._expire(state)
        for timer in self._preflights.values():
            timer.cancel()
        self._preflights.clear()
        for channel in list(self._channels.values()):
            channel.cancel.cancel("deftly serve is shutting down")
        if self._background:
            await asyncio.wait(self._background, timeout=10.0)


def _wake(waiter: asyncio.Future[_Ask | None], task: asyncio.Future[list[CallResult]]) -> None:
    """The call ended: wake the request waiting for it."""
    if not waiter.done():
        waiter.set_result(None)
