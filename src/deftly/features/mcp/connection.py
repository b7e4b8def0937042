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
import importlib.metadata
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import httpx2
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from deftly.contract.result import ToolResult
from deftly.contract.tool import ToolContext, ToolUpdate
from deftly.features.mcp.content import from_mcp_result
from deftly.features.mcp.specs import ServerSpec, State

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


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: mt.ToolAnnotations | None = None


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


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
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
    ) -> None:
        self.spec = spec
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
            inner = stdio_client(params, errlog=errlog) if errlog else stdio_client(params)
        else:
            inner = _http_transport(self.spec.url or "", dict(self.spec.headers))
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
            )
            async with client:
                tools = await _list_tools(client)
                if not ready.done():
                    ready.set_result((client, tools))
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            elif generation == self._generation and not self._closing:
                self._lost(generation, describe_error(exc))
            log.debug("MCP server %s: owner task ended", self.name, exc_info=True)

    async def _connect(self) -> bool:
        self._retire()
        self._generation += 1
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
            self._fail(f"it failed to start: {describe_error(error)}")
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

        call = asyncio.ensure_future(
            client.call_tool(tool, arguments, progress_callback=on_progress)
        )
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
            return ToolResult.error(
                f'MCP server "{self.name}" refused the call to "{tool}": {exc.error.message}'
            )
        except Exception as exc:
            self._lost(generation, f"the connection failed: {describe_error(exc)}")
            return self._died(tool)
        return from_mcp_result(result, where=f'MCP server "{self.name}"', max_text=max_text)

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
            RemoteTool(t.name, t.description or "", t.input_schema, t.annotations)
            for t in page.tools
        )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def _abandon(call: Awaitable[Any]) -> None:
    """Cancel a call (the SDK tells the server) and wait for it to unwind, bounded."""
    future = asyncio.ensure_future(call)
    future.cancel()
    await asyncio.wait({future}, timeout=5.0)
    if future.done() and not future.cancelled():
        future.exception()  # retrieved, so asyncio does not log it as never retrieved


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
