"""A scripted model server on 127.0.0.1 that speaks the OpenAI chat-completions and the
Anthropic messages wire formats (real HTTP, real SSE), so tests drive the real SDKs.

    with ModelServer([calls(Call("Read", {"path": "a.txt"})), say("done")]) as server:
        provider = OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k")
        ...
        assert server.requests[1]["messages"][-1]["role"] == "tool"

`POST /v1/chat/completions` answers in the OpenAI format, `POST /v1/messages` in the
Anthropic one; each request takes the next step of the script (or the script function's
answer to the request's JSON body). Requests are recorded (`requests`, `headers`). When
the script runs out, the server answers 400 "the script has no step N", so a test that
asks too often fails loudly. `in_flight` is how many requests are being answered now,
`peak_in_flight` the most at once (a request counts from its arrival until just before
its answer's last bytes are sent, so a client's next request never overlaps its last
one's count); `wait_in_flight(n)` waits until n are being answered.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.scripted import anthropic_wire, openai_wire
from tests.scripted.script import Fail, Reply, Script, Step


class ModelServer:
    """The server (a context manager; it runs in a thread)."""

    def __init__(self, script: Script = (), *, model: str = "scripted") -> None:
        self.script = script
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.request_seen = threading.Event()
        self.in_flight = 0
        self.peak_in_flight = 0
        self._flight = threading.Condition(self._lock)

    # -- addresses ---------------------------------------------------------------------

    @property
    def base(self) -> str:
        """http://127.0.0.1:PORT"""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """The `base_url` for the openai SDK."""
        return f"{self.base}/v1"

    @property
    def anthropic_url(self) -> str:
        """The `base_url` for the anthropic SDK."""
        return self.base

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- the script --------------------------------------------------------------------

    def wait_in_flight(self, count: int, timeout: float = 30) -> bool:
        """Wait until at least `count` requests are being answered (False on timeout)."""
        with self._flight:
            return self._flight.wait_for(lambda: self.in_flight >= count, timeout)

    def _arrived(self) -> None:
        with self._flight:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self._flight.notify_all()

    def _answered(self) -> None:
        with self._flight:
            self.in_flight -= 1

    def _next(self, body: dict[str, Any], headers: dict[str, str], path: str) -> tuple[int, Step]:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
        self.request_seen.set()
        if callable(self.script):
            return index, self.script(body)
        if index >= len(self.script):
            return index, Fail(400, f"the script has no step {index + 1}")
        return index, self.script[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            counted = False

            def do_POST(self) -> None:
                server._arrived()
                self.counted = True
                try:
                    self._answer()
                finally:
                    self._done()

            def _done(self) -> None:
                """This request no longer counts as in flight (once)."""
                if self.counted:
                    self.counted = False
                    server._answered()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                anthropic = self.path.rstrip("/").endswith("/messages")
                step_index, step = server._next(body, headers, self.path)
                if isinstance(step, Fail):
                    self._fail(step, anthropic)
                elif body.get("stream"):
                    self._stream(step, step_index, anthropic, body)
                else:
                    wire = anthropic_wire if anthropic else openai_wire
                    self._json(200, wire.whole_body(step, server.model, step_index))

            def _fail(self, step: Fail, anthropic: bool) -> None:
                wire = anthropic_wire if anthropic else openai_wire
                body: Any = step.body
                if body is None:
                    body = wire.error_body(step.status, f"scripted error {step.status}")
                self._json(step.status, body, step.headers)

            def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                content_type = "text/html" if isinstance(body, str) else "application/json"
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self._done()
                self.wfile.write(data)

            def _stream(
                self, step: Reply, index: int, anthropic: bool, body: dict[str, Any]
            ) -> None:
                if anthropic:
                    frames = [
                        anthropic_wire.sse(name, data)
                        for name, data in anthropic_wire.stream_events(step, server.model, index)
                    ]
                else:
                    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    frames = [
                        openai_wire.sse(event)
                        for event in openai_wire.stream_events(
                            step, server.model, index, include_usage
                        )
                    ]
                    frames.append(openai_wire.DONE)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                gate_at = len(frames) - (3 if anthropic else 2)
                for n, frame in enumerate(frames):
                    if step.drop_after is not None and n >= step.drop_after:
                        self.close_connection = True
                        self.wfile.flush()
                        return  # the connection closes mid-stream
                    if step.gate is not None and n == gate_at:
                        step.gate.wait(30)
                    if step.delay:
                        time.sleep(step.delay)
                    if n == gate_at:
                        self._done()  # the final events: the client may be done after them
                    self.wfile.write(frame)
                    self.wfile.flush()
                self.close_connection = True

        return Handler


ScriptFunction = Callable[[dict[str, Any]], Step]
