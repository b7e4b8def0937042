"""A real HTTP server on 127.0.0.1, in a thread, for the web tools' tests.

Routes are functions of the request handler; every request is recorded (method, path,
headers, body). A handler that must wait (a slow page) waits on `released`, which closing
the server sets, so no test waits for a timer and teardown never hangs.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Route = Callable[["Handler"], None]


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


class Handler(BaseHTTPRequestHandler):
    """Dispatches to the server's routes by path (without the query)."""

    server: WebServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen = Seen(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        self.server.requests.append(self.seen)
        route = self.server.routes.get(parts.path)
        if route is None:
            self.reply(404, b"not here", "text/plain")
            return
        route(self)

    do_GET = _dispatch
    do_POST = _dispatch

    def reply(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = "text/plain; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send a whole response."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


class WebServer(ThreadingHTTPServer):
    """The server; use it as a context manager (started on enter, closed on exit)."""

    def __init__(
        self, routes: dict[str, Route] | None = None, *, tls: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"
        self.routes: dict[str, Route] = dict(routes or {})
        self.daemon_threads = True
        self.block_on_close = False
        self.requests: list[Seen] = []
        self.released = threading.Event()
        self.finished: dict[str, threading.Event] = {}
        self.counters: dict[str, int] = {}
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The full URL of `path` on this server."""
        return f"{self.scheme}://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        return [seen.path for seen in self.requests]

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=30)
