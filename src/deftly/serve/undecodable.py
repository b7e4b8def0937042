"""An answer for requests the SDK cannot decode, so a client never waits forever.

The stdio transport decodes each line with pydantic; a request nested deeper than its
recursion limit (a `tools/call` with arguments 900 levels deep), or otherwise invalid,
reaches the server only as an exception, and nothing answers it. Here, when such a line
still shows a top-level `"id"` and `"method"`, the client gets a JSON-RPC error for that id
saying what was wrong; other exceptions pass through as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as mt
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from deftly.contract.json_scan import scalar, top_level_fields


def envelope(text: str) -> tuple[str | int | None, str | None]:
    """The top-level `id` and `method` of a JSON-RPC message that did not decode, read
    token by token (never decoded whole: it may be nested far too deep for that)."""
    fields = top_level_fields(text, ("id", "method"))
    request_id = scalar(fields.get("id", "null"))
    method = scalar(fields.get("method", "null"))
    return (
        request_id if isinstance(request_id, str | int) else None,
        method if isinstance(method, str) else None,
    )


def _problem(exc: ValidationError) -> tuple[int, str] | None:
    """The JSON-RPC error code and message for a line that failed to decode, or None."""
    for error in exc.errors(include_url=False):
        message = str(error.get("msg", ""))
        if "recursion limit" in message:
            return mt.PARSE_ERROR, (
                "the request is nested too deeply to decode; no tool takes arguments like "
                "that. Send flat arguments as the tool's input schema describes them"
            )
        if error.get("type") == "json_invalid":
            return mt.PARSE_ERROR, f"the request is not valid JSON ({message})"
    return mt.INVALID_REQUEST, "the request is not a valid JSON-RPC message for this server"


def _input_text(exc: ValidationError) -> str | None:
    for error in exc.errors(include_url=False):
        value = error.get("input")
        if isinstance(value, str | bytes):
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return None


def _answer_for(item: SessionMessage | Exception) -> SessionMessage | None:
    """The JSON-RPC error that answers `item`, when it is a request that did not decode
    but whose id and method can still be read; None to pass it on as it is."""
    if not isinstance(item, ValidationError):
        return None
    text = _input_text(item)
    problem = _problem(item)
    if text is None or problem is None:
        return None
    request_id, method = envelope(text)
    if request_id is None or method is None:
        return None
    code, message = problem
    error = mt.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=mt.ErrorData(code=code, message=f"{method}: {message}"),
    )
    return SessionMessage(error)


class AnsweringUndecodable(ObjectReceiveStream[SessionMessage | Exception]):
    """The transport's receive stream, answering (through `reply.send`) the requests that
    did not decode but whose id can still be read, and passing the rest on. Checked as
    each message is received: no task or stream of its own between transport and server."""

    def __init__(
        self,
        incoming: ObjectReceiveStream[SessionMessage | Exception],
        reply: ObjectSendStream[SessionMessage],
    ) -> None:
        self._incoming = incoming
        self._reply = reply

    async def receive(self) -> SessionMessage | Exception:
        """The next message the server should see."""
        while True:
            item = await self._incoming.receive()
            answer = _answer_for(item)
            if answer is None:
                return item
            await self._reply.send(answer)

    async def aclose(self) -> None:
        """Close the transport's stream."""
        await self._incoming.aclose()


async def answer_undecodable(
    incoming: AsyncIterator[SessionMessage | Exception],
    outgoing: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    reply: Any,
) -> None:
    """Pass `incoming` on to `outgoing`, answering (through `reply.send`) the requests that
    did not decode but whose id can still be read (for transports that push into a
    stream; stdio uses `AnsweringUndecodable`)."""
    async with outgoing:
        async for item in incoming:
            answer = _answer_for(item)
            if answer is not None:
                await reply.send(answer)
                continue
            await outgoing.send(item)
