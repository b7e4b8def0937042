"""A bearer token in front of `deftly serve --transport http`.

Whoever can reach the port can run the workspace's tools, so the token (from the
environment, never the command line where `ps` shows it) is compared in constant time on
every HTTP request. Without one, only a loopback address may be served: the SDK's DNS
rebinding protection then keeps web pages out, and the machine's own users are trusted.
"""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "DEFTLY_SERVE_TOKEN"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerGate:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get a 401
    that says how to authenticate; everything else (lifespan) passes through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "error": "unauthorized",
                "message": (
                    "This deftly server needs a bearer token: send the header "
                    f"`Authorization: Bearer <token>` with the value of {TOKEN_ENV} the "
                    "server was started with."
                ),
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="deftly"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
                break
        return hmac.compare_digest(given, self._expected)
