"""One mounted MCP server: start it, call its tools, notice when it dies, restart it once.

The SDK's client lives in an *owner* task for its whole life (anyio scopes must be left by
the task that entered them); calls are made from the callers' tasks. Everything that can
hang has a bound: start-up (connect + list tools) has `startup_timeout`, every call has
`call_timeout`, and a server whose process exits is noticed at once (its output stream
ends), so a call in flight fails immediately instead of waiting forever. The next call
tries one restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.metadata
import logging
import os
import tempfile
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, TextIO

import anyio
import httpx2
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import SessionMessage

from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.tool import ToolContext, ToolUpdate
from deftly.features.mcp.content import from_mcp_result
from deftly.features.mcp.specs import ServerSpec, State
from deftly.features.mcp.stdio import stdio_transport

log = logging.getLogger(__name__)

STDERR_TAIL_CHARS = 2_000
MAX_TOOL_PAGES = 100
CLOSE_WAIT_SECONDS = 10.0


def deftly_version() -> str:
    """deftly's installed version, as the client tells MCP servers ("0" when not installed)."""
    try:
        return importlib.metadata.version("deftly")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return "0"


ListKind = Literal["tools", "resources", "prompts"]

_CALL: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "deftly_mcp_call", default=None
)
"""The call a server request (elicitation) belongs to, where the SDK runs it in the caller's
task (2026-07-28 input rounds); the connection's calls in flight otherwise."""


@frozen
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: mt.ToolAnnotations | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None


Elicit = Callable[
    ["McpConnection", mt.ElicitRequestParams, ToolContext | None],
    Awaitable[tuple[mt.ElicitResult | mt.ErrorData, str | None]],
]
"""Answer a server's elicitation for the call `ctx` (None: outside any call): the answer,
and a note for that call's result (None: nothing to add)."""


def _no_roots() -> Sequence[Path]:
    return ()


async def _nobody_answers(
    connection: McpConnection, params: mt.ElicitRequestParams, ctx: ToolContext | None
) -> tuple[mt.ElicitResult | mt.ErrorData, str | None]:
    return mt.ErrorData(code=mt.INVALID_REQUEST, message="deftly cannot ask questions here"), None


@dataclass
class ClientHooks:
    """What the connection asks of its manager: the roots to offer, who answers a server's
    questions, and who hears that a list changed."""

    roots: Callable[[], Sequence[Path]] = _no_roots
    elicit: Elicit = _nobody_answers
    changed: Callable[[McpConnection, ListKind], None] = field(
        default=lambda connection, kind: None
    )


def describe_error(exc: BaseException) -> str:
    """One line for a person; the innermost cause of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _WatchedRead:
    """The transport's read stream, reporting when it ends (the server went away)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _watched(
    inner: contextlib.AbstractAsyncContextManager[TransportStreams], on_end: Callable[[], None]
) -> AsyncIterator[Any]:
    async with inner as (read, write):
        yield _WatchedRead(read, on_end), write


AUTH_STATUSES = {401: "Unauthorized", 403: "Forbidden"}


@contextlib.asynccontextmanager
async def _http_transport(
    url: str, headers: dict[str, str], on_status: Callable[[int], None]
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP; every refused response's status is reported (the SDK keeps only
    "Server returned an error response", which does not say that the token is wrong)."""
    timeout = httpx2.Timeout(30.0, read=300.0)

    async def seen(response: httpx2.Response) -> None:
        if response.status_code in AUTH_STATUSES:
            on_status(response.status_code)

    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=timeout, event_hooks={"response": [seen]}
        ) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


class McpConnection:
    """The state and the client of one configured server."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        on_connected: Callable[[McpConnection], None] | None = None,
        hooks: ClientHooks | None = None,
    ) -> None:
        self.spec = spec
        self.hooks = hooks or ClientHooks()
        self.resources: list[mt.Resource] = []
        self.offers_resources = False
        """Whether the server declares resources (it can read the links its tools return)."""
        self.prompts: list[mt.Prompt] = []
        self._in_flight: list[ToolContext] = []
        self._notes: dict[str, list[str]] = {}
        self._helpers: set[asyncio.Task[None]] = set()
        self._auth_status: int | None = None
        self.state: State = "pending" if spec.enabled else "disabled"
        self.last_error: str | None = None
        self.tools: list[RemoteTool] = []
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.restarts = 0
        self._on_connected = on_connected
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._retired: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._generation = 0
        self._closing = False
        self._stderr_path: Path | None = None
        self._stderr: TextIO | None = None

    @property
    def name(self) -> str:
        """The server's name from its configuration (the `<server>` of `mcp__<server>__<tool>`)."""
        return self.spec.name

    # -- start-up ------------------------------------------------------------------------

    async def start(self) -> bool:
        """Connect and list the tools within the start-up timeout. Never raises."""
        if not self.spec.enabled or self._closing:
            return False
        async with self._lock:
            return await self._connect()

    def _open_stderr(self) -> TextIO | None:
        self._drop_stderr()
        try:
            fd, name = tempfile.mkstemp(prefix=f"deftly-mcp-{self.name[:40]}-", suffix=".log")
            os.close(fd)
            self._stderr_path = Path(name)
            # Append mode: the child writes at the end whatever offset we read at.
            self._stderr = open(self._stderr_path, "a", encoding="utf-8")  # noqa: SIM115
        except OSError:
            self._stderr_path = None
            self._stderr = None
        return self._stderr

    def _drop_stderr(self) -> None:
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()
        if self._stderr_path is not None:
            with contextlib.suppress(OSError):
                self._stderr_path.unlink()
        self._stderr = None
        self._stderr_path = None

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (stdio servers only)."""
        path = self._stderr_path
        if path is None:
            return ""
        try:
            with open(path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - STDERR_TAIL_CHARS * 2))
                data = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return data[-STDERR_TAIL_CHARS:].strip()

    def _with_stderr(self, message: str) -> str:
        tail = self.stderr_tail()
        return f"{message}\nstderr: {tail}" if tail else message

    def _refused(self, status: int) -> None:
        self._auth_status = status

    def _auth_problem(self) -> str | None:
        """What a 401/403 from an HTTP server means, and what to do about it."""
        status = self._auth_status
        if status is None:
            return None
        return (
            f"{status} {AUTH_STATUSES[status]} from {self.spec.url}: check the Authorization "
            f"header in mcp.json (the server is configured in {self.spec.origin})"
        )

    def _transport(self, generation: int) -> contextlib.AbstractAsyncContextManager[Any]:
        def ended() -> None:
            self._transport_ended(generation)

        if self.spec.transport == "stdio":
            params = StdioServerParameters(
                command=self.spec.command or "",
                args=list(self.spec.args),
                env=dict(self.spec.env) or None,
                cwd=self.spec.cwd,
            )
            errlog = self._open_stderr()
            inner = stdio_transport(params, errlog)
        else:
            inner = _http_transport(self.spec.url or "", dict(self.spec.headers), self._refused)
        return _watched(inner, ended)

    async def _own(
        self,
        ready: asyncio.Future[tuple[Client, list[RemoteTool]]],
        stop: asyncio.Event,
        generation: int,
    ) -> None:
        """The owner task: enter the client, hand it over, wait for the stop signal."""
        try:
            client = Client(
                self._transport(generation),
                client_info=mt.Implementation(name="deftly", version=deftly_version()),
                cache=None,
                list_roots_callback=self._list_roots,
                elicitation_callback=self._elicit,
                message_handler=self._on_message,
            )
            async with client:
                tools = await _list_tools(client)
                self.resources = await _list_resources(client)
                self.prompts = await _list_prompts(client)
                self.offers_resources = client.server_capabilities.resources is not None
                if not ready.done():
                    ready.set_result((client, tools))
                listener = asyncio.create_task(self._listen(client, generation))
                try:
                    await stop.wait()
                finally:
                    listener.cancel()
                    await asyncio.wait({listener}, timeout=CLOSE_WAIT_SECONDS)
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            elif generation == self._generation and not self._closing:
                self._lost(generation, describe_error(exc))
            log.debug("MCP server %s: owner task ended", self.name, exc_info=True)

    # -- what the server asks of the client, and tells it --------------------------------

    async def _list_roots(self, context: Any) -> mt.ListRootsResult:
        """The workspace root and additional directories, read when asked (they change)."""
        roots = [mt.Root(uri=p.as_uri(), name=p.name or str(p)) for p in self.hooks.roots()]
        return mt.ListRootsResult(roots=roots)

    def _call_in_flight(self) -> ToolContext | None:
        ctx = _CALL.get()
        if ctx is None and self._in_flight:
            ctx = self._in_flight[-1]
        return ctx

    async def _elicit(
        self, context: Any, params: mt.ElicitRequestParams
    ) -> mt.ElicitResult | mt.ErrorData:
        ctx = self._call_in_flight()
        try:
            answer, note = await self.hooks.elicit(self, params, ctx)
        except Exception as exc:
            log.exception("MCP server %s: answering its elicitation failed", self.name)
            return mt.ErrorData(code=mt.INTERNAL_ERROR, message=f"deftly failed to ask: {exc}")
        if note and ctx is not None:
            self._notes.setdefault(ctx.call_id, []).append(note)
        return answer

    async def _on_message(self, message: Any) -> None:
        """2025-era list changes arrive as notifications."""
        kinds: dict[type[Any], ListKind] = {
            mt.ToolListChangedNotification: "tools",
            mt.ResourceListChangedNotification: "resources",
            mt.PromptListChangedNotification: "prompts",
        }
        kind = kinds.get(type(message))
        if kind is not None:
            self._spawn(self._relist(kind, self._generation))

    async def _listen(self, client: Client, generation: int) -> None:
        """2026-era list changes arrive on a `subscriptions/listen` stream."""
        if client.protocol_version < "2026":
            return
        caps = client.server_capabilities
        wanted = {
            "tools": bool(caps.tools and caps.tools.list_changed),
            "resources": bool(caps.resources and caps.resources.list_changed),
            "prompts": bool(caps.prompts and caps.prompts.list_changed),
        }
        if not any(wanted.values()):
            return
        from mcp.shared.subscriptions import (
            PromptsListChanged,
            ResourcesListChanged,
            ToolsListChanged,
        )

        kinds: dict[type[Any], ListKind] = {
            ToolsListChanged: "tools",
            ResourcesListChanged: "resources",
            PromptsListChanged: "prompts",
        }
        try:
            async with client.listen(
                tools_list_changed=wanted["tools"],
                resources_list_changed=wanted["resources"],
                prompts_list_changed=wanted["prompts"],
            ) as events:
                async for event in events:
                    kind = kinds.get(type(event))
                    if kind is not None:
                        await self._relist(kind, generation)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.debug("MCP server %s: its change stream ended", self.name, exc_info=True)

    async def settled(self) -> None:
        """Wait for the work started by the server's messages and ours (a re-list, a
        roots/list_changed being sent)."""
        while self._helpers:
            await asyncio.wait(set(self._helpers))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._helpers.add(task)
        task.add_done_callback(self._helpers.discard)

    async def _relist(self, kind: ListKind, generation: int) -> None:
        """List `kind` again and tell the manager (a failure keeps the old list)."""
        client = self._client
        if client is None or generation != self._generation:
            return
        try:
            if kind == "tools":
                self.tools = await _list_tools(client)
            elif kind == "resources":
                self.resources = await _list_resources(client)
            else:
                self.prompts = await _list_prompts(client)
        except Exception:
            log.info("MCP server %s: listing its %s again failed", self.name, kind, exc_info=True)
            return
        if generation == self._generation and self.state == "connected":
            self.hooks.changed(self, kind)

    def roots_changed(self) -> None:
        """Tell a 2025-era server that the roots changed (2026-era servers ask every time)."""
        client = self._client
        if client is None or self.state != "connected" or client.protocol_version >= "2026":
            return

        async def send() -> None:
            try:
                with warnings.catch_warnings():  # deprecated for 2026-era servers only
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.send_roots_list_changed()
            except Exception:
                log.debug("MCP server %s: roots/list_changed failed", self.name, exc_info=True)

        self._spawn(send())

    async def read_resource(self, uri: str) -> mt.ReadResourceResult:
        """Read one of the server's resources (raises DeftlyError, saying why, when it cannot)."""
        result: mt.ReadResourceResult = await self._request(
            f"read the resource {uri}", lambda c: c.read_resource(uri)
        )
        return result

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> mt.GetPromptResult:
        """Get one of the server's prompts (raises DeftlyError, saying why, when it cannot)."""
        result: mt.GetPromptResult = await self._request(
            f'get the prompt "{name}"', lambda c: c.get_prompt(name, arguments)
        )
        return result

    async def _request(self, what: str, send: Callable[[Client], Awaitable[Any]]) -> Any:
        from deftly.contract.errors import DeftlyError

        problem = await self._ensure_connected()
        if problem is not None:
            raise DeftlyError(f"Could not {what}: {problem}")
        client = self._client
        assert client is not None
        try:
            return await asyncio.wait_for(send(client), self.spec.call_timeout)
        except TimeoutError:
            raise DeftlyError(
                f'MCP server "{self.name}" did not answer within '
                f"{self.spec.call_timeout:g} s, so deftly could not {what}."
            ) from None
        except MCPError as exc:
            raise DeftlyError(
                f'MCP server "{self.name}" refused to {what.split(" ", 1)[-1]}: {exc.error.message}'
            ) from None
        except Exception as exc:
            raise DeftlyError(
                f'Could not {what} on MCP server "{self.name}": {describe_error(exc)}'
            ) from None

    async def _connect(self) -> bool:
        self._retire()
        self._generation += 1
        self._auth_status = None
        generation = self._generation
        self.state = "pending"
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[Client, list[RemoteTool]]] = loop.create_future()
        stop = asyncio.Event()
        owner = asyncio.create_task(self._own(ready, stop, generation), name=f"mcp:{self.name}")
        self._owner, self._stop = owner, stop
        timeout = self.spec.startup_timeout
        try:
            await asyncio.wait({ready}, timeout=timeout)
        except asyncio.CancelledError:
            owner.cancel()
            self._retire()
            raise
        if not ready.done():
            self._fail(f"it did not start within {timeout:g} s (connect and list its tools)")
            owner.cancel()
            self._retire()
            return False
        error = ready.exception() if not ready.cancelled() else RuntimeError("start-up cancelled")
        if error is not None:
            self._fail(f"it failed to start: {self._auth_problem() or describe_error(error)}")
            self._retire()
            return False
        client, tools = ready.result()
        self._client = client
        self.tools = tools
        self.protocol_version = client.protocol_version
        info = client.server_info
        self.server_name = f"{info.name} {info.version}".strip() if info else None
        self.state = "connected"
        self.last_error = None
        if self._on_connected is not None:
            try:
                self._on_connected(self)
            except Exception:
                log.exception("MCP server %s: registering its tools failed", self.name)
        return True

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.last_error = self._with_stderr(message)
        self._client = None

    def _transport_ended(self, generation: int) -> None:
        if generation == self._generation and not self._closing and self.state == "connected":
            self._lost(generation, "the server closed the connection (its process exited)")

    def _lost(self, generation: int, message: str) -> None:
        if generation != self._generation or self.state != "connected":
            return
        log.info("MCP server %s went away: %s", self.name, message)
        self._fail(message)

    def _retire(self) -> None:
        """Stop the current owner task (in the background) and forget its client."""
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None and not self._owner.done():
            self._retired.add(self._owner)
            self._owner.add_done_callback(self._retired.discard)
        self._owner = None
        self._stop = None
        self._client = None

    # -- calls ---------------------------------------------------------------------------

    async def _ensure_connected(self) -> str | None:
        """None when connected (restarting once if needed), else why not."""
        if self.state == "connected" and self._client is not None:
            return None
        if self.state == "disabled":
            return f'MCP server "{self.name}" is disabled in its configuration.'
        if self._closing:
            return f'MCP server "{self.name}" is shutting down with the runtime.'
        async with self._lock:
            if self.state == "connected" and self._client is not None:
                return None
            before = self.last_error or "it was not running"
            self.restarts += 1
            if await self._connect():
                return None
            return (
                f'MCP server "{self.name}" is not running ({_first_line(before)}), and '
                f"restarting it failed: {self.last_error}"
            )

    async def call(
        self, tool: str, arguments: dict[str, Any], ctx: ToolContext, *, max_text: int
    ) -> ToolResult:
        """Run one tool call on the server; every failure becomes an error result."""
        problem = await self._ensure_connected()
        if problem is not None:
            return ToolResult.error(
                f"{problem}\nThe call to {tool!r} was not made. Tell the user the server needs "
                "attention (`deftly mcp list` shows its state); do not retry right away."
            )
        client = self._client
        assert client is not None
        generation = self._generation

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            ctx.report(ToolUpdate("progress", text=message, progress=progress, total=total))

        self._in_flight.append(ctx)
        try:
            result = await self._call(
                client, generation, tool, arguments, ctx, on_progress, max_text
            )
        finally:
            self._in_flight.remove(ctx)
            notes = self._notes.pop(ctx.call_id, [])
        if notes:
            joined = "\n".join(n for n in (result.note, *notes) if n)
            result = replace(result, note=joined)
        return result

    async def _call(
        self,
        client: Client,
        generation: int,
        tool: str,
        arguments: dict[str, Any],
        ctx: ToolContext,
        on_progress: Any,
        max_text: int,
    ) -> ToolResult:
        token = _CALL.set(ctx)
        try:
            call = asyncio.ensure_future(
                client.call_tool(tool, arguments, progress_callback=on_progress)
            )
        finally:
            _CALL.reset(token)
        stopped = asyncio.ensure_future(ctx.cancel.wait())
        timeout = self.spec.call_timeout
        try:
            done, _ = await asyncio.wait(
                {call, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            await _abandon(call)
            raise
        finally:
            stopped.cancel()
        if call not in done:
            await _abandon(call)
            if ctx.cancel.cancelled:
                return ToolResult.error(
                    f'The call to "{tool}" on MCP server "{self.name}" was cancelled.'
                )
            return ToolResult.error(
                f'MCP server "{self.name}" did not answer "{tool}" within {timeout:g} s, so the '
                "call was abandoned (the server was asked to stop it). Try a smaller request, "
                "or tell the user the server seems stuck."
            )
        try:
            result = call.result()
        except MCPError as exc:
            if exc.error.code == mt.CONNECTION_CLOSED:
                self._lost(generation, "the server closed the connection during a call")
                return self._died(tool)
            why = self._auth_problem() or exc.error.message
            return ToolResult.error(f'MCP server "{self.name}" refused the call to "{tool}": {why}')
        except Exception as exc:
            self._lost(generation, f"the connection failed: {describe_error(exc)}")
            return self._died(tool)
        return from_mcp_result(
            result, where=f'MCP server "{self.name}"', max_text=max_text, link=self._link
        )

    def _link(self, remote_uri: str) -> str:
        from deftly.features.mcp.naming import resource_uri

        return resource_uri(self.name, remote_uri)

    def _died(self, tool: str) -> ToolResult:
        return ToolResult.error(
            f'MCP server "{self.name}" stopped while running "{tool}": {self.last_error}\n'
            "The call failed and may or may not have taken effect. The server will be "
            "restarted on the next call to one of its tools."
        )

    # -- shutdown ------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop the server (stdio: close its stdin, then terminate it) and wait, bounded."""
        self._closing = True
        if self.state != "disabled":
            self.state = "closed"
        for helper in list(self._helpers):
            helper.cancel()
        self._retire()
        tasks = set(self._retired)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_WAIT_SECONDS)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=CLOSE_WAIT_SECONDS)
        self._drop_stderr()


async def _list_tools(client: Client) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(
            RemoteTool(
                t.name,
                t.description or "",
                t.input_schema,
                t.annotations,
                title=t.title or (t.annotations.title if t.annotations else None),
                output_schema=t.output_schema,
            )
            for t in page.tools
        )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def _list_resources(client: Client) -> list[mt.Resource]:
    if client.server_capabilities.resources is None:
        return []
    found: list[mt.Resource] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_resources(cursor=cursor)
        found.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def _list_prompts(client: Client) -> list[mt.Prompt]:
    if client.server_capabilities.prompts is None:
        return []
    found: list[mt.Prompt] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_prompts(cursor=cursor)
        found.extend(page.prompts)
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def _abandon(call: Awaitable[Any]) -> None:
    """Cancel a call (the SDK tells the server) and wait for it to unwind, bounded."""
    future = asyncio.ensure_future(call)
    future.cancel()
    await asyncio.wait({future}, timeout=5.0)
    if future.done() and not future.cancelled():
        future.exception()  # retrieved, so asyncio does not log it as never retrieved


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
