"""The clients connected to one `ToolServer`: who to tell when the lists change, and at
which log level each asked to be told things.

The SDK makes a fresh session object per request, all sharing their connection; a client is
known by that connection from its first request on (stdio: one; HTTP: one per session).
Any request's session can still send on the connection afterwards, so the latest is kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as mt
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

SEND_SECONDS = 5.0
"""How long one notification to one client may take before that client is given up on."""


@dataclass(eq=False)
class Client:
    """One connected client: its latest request's context and the log level it asked for."""

    ctx: ServerRequestContext[Any]
    level: mt.LoggingLevel | None = None

    @property
    def modern(self) -> bool:
        """Whether it speaks 2026-07-28 or later (list changes only on subscriptions)."""
        return self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def connection_of(ctx: ServerRequestContext[Any]) -> object:
    """What all of one client's requests share (the SDK keeps it on the session)."""
    return getattr(ctx.session, "_connection", ctx.session)


class Clients:
    """Every client seen so far, by connection."""

    def __init__(self) -> None:
        self._by_connection: dict[int, tuple[object, Client]] = {}
        self.connected = asyncio.Event()
        """Set at the first request: from then on messages have somewhere to go."""

    def seen(self, ctx: ServerRequestContext[Any]) -> Client:
        """Record a request of a client; returns that client."""
        connection = connection_of(ctx)
        known = self._by_connection.get(id(connection))
        if known is None or known[0] is not connection:
            client = Client(ctx)
            self._by_connection[id(connection)] = (connection, client)
        else:
            client = known[1]
            client.ctx = ctx
        self.connected.set()
        return client

    def get(self, ctx: ServerRequestContext[Any]) -> Client | None:
        """The client of this request, if it was seen."""
        known = self._by_connection.get(id(connection_of(ctx)))
        return known[1] if known is not None else None

    def all(self) -> list[Client]:
        """Every client still thought to be connected, oldest first."""
        return [client for _, client in self._by_connection.values()]

    def forget(self, client: Client) -> None:
        """Stop telling a client things (its connection failed)."""
        for key, (_, known) in list(self._by_connection.items()):
            if known is client:
                del self._by_connection[key]

    async def tell(
        self, send: Callable[[ServerSession], Awaitable[None]], *, legacy_only: bool = True
    ) -> None:
        """Send one notification to every client (handshake-era ones only, by default: newer
        ones hear of changes through subscriptions); a client that cannot be reached is
        forgotten."""
        for client in self.all():
            if legacy_only and client.modern:
                continue
            try:
                async with asyncio.timeout(SEND_SECONDS):
                    await send(client.ctx.session)
            except Exception as exc:
                log.debug("could not notify an MCP client, forgetting it: %s", exc)
                self.forget(client)
