"""Running a `ToolServer` over stdio or streamable HTTP until it is told to stop.

stdio stops when the client closes our stdin; HTTP stops on SIGINT/SIGTERM. Either way the
function returns normally, so the caller closes its runtime (background tasks, mounted MCP
servers) before the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Iterator

import uvicorn
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp

from deftly.env.signals import on_stop_signals
from deftly.serve.http_auth import BearerGate
from deftly.serve.server import ToolServer
from deftly.serve.undecodable import AnsweringUndecodable

HTTP_PATH = "/mcp"


async def serve_stdio(server: ToolServer) -> bool:
    """Serve one client over our stdin/stdout until it closes stdin or a signal comes.

    Returns False when a signal stopped it while the client still held stdin open: the
    SDK reads stdin in a worker thread that cannot be interrupted, so that read is left
    behind. The caller should then exit the process once it has cleaned up.
    """
    lowlevel = server.server

    async def run() -> None:
        async with stdio_server() as (read, write):
            checked = AnsweringUndecodable(read, write)
            await lowlevel.run(checked, write, lowlevel.create_initialization_options())

    serving = asyncio.create_task(run())
    stop = asyncio.Event()
    try:
        with on_stop_signals(lambda _: stop.set()):
            stopped = asyncio.create_task(stop.wait())
            try:
                await asyncio.wait({serving, stopped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopped.cancel()
        if serving.done():
            serving.result()
            return True
        serving.cancel()
        await asyncio.wait({serving}, timeout=1.0)
        return serving.done()
    except asyncio.CancelledError:
        serving.cancel()
        raise
    finally:
        await server.aclose()


class _QuietServer(uvicorn.Server):
    """uvicorn re-raises the signal that stopped it, which would kill us before cleanup;
    here the signals are ours, and `ready` tells when the sockets are bound."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


async def serve_http(
    server: ToolServer,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    token: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve streamable HTTP at http://host:port/mcp until SIGINT/SIGTERM; with `token`,
    every request must carry it as a bearer token."""
    app: ASGIApp = server.server.streamable_http_app(host=host, streamable_http_path=HTTP_PATH)
    if token:
        app = BearerGate(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = _QuietServer(config)

    def stop() -> None:
        web.should_exit = True

    try:
        with on_stop_signals(lambda _: stop()):
            running = asyncio.create_task(web.serve())
            ready = asyncio.create_task(web.ready.wait())
            await asyncio.wait({running, ready}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if web.started and on_ready is not None:
                sockets = [s for srv in web.servers for s in srv.sockets]
                bound = sockets[0].getsockname()[1] if sockets else port
                shown = f"[{host}]" if ":" in host else host
                on_ready(f"http://{shown}:{bound}{HTTP_PATH}")
            await running
    finally:
        await server.aclose()
