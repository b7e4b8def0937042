"""An answer for requests the SDK cannot decode, so a client never waits forever.

The stdio transport decodes each line with pydantic; a request nested deeper than its
recursion limit (a `tools/call` with arguments 900 levels deep), or otherwise invalid,
reaches the server only as an exception, and nothing answers it. Here, when such a line
still shows a top-level `"id"` and `"method"`, the client gets a JSON-RPC error for that id
saying what was wrong; other exceptions pass through as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as mt
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')
_SCAN_TOKENS = 100_000
"""Tokens looked at for the envelope's keys; the keys of a real request come early."""


def envelope(text: str) -> tuple[str | int | None, str | None]:
    """The top-level `id` and `method` of a JSON-RPC message that did not decode, read
    token by token (never decoded whole: it may be nested far too deep for that)."""
    depth = 0
    key: str | None = None  # a string at the top level, maybe a key
    expecting: str | None = None  # the key whose value comes next
    found: dict[str, object] = {}
    for count, match in enumerate(_TOKEN.finditer(text)):
        if count > _SCAN_TOKENS:
            break
        token = match.group()
        if token in "[{":
            depth += 1
            key = expecting = None
        elif token in "]}":
            depth -= 1
        elif depth != 1:
            continue
        elif token == ":":
            expecting, key = key, None
        elif token == ",":
            key = expecting = None
        elif expecting is not None:
            if expecting in ("id", "method"):
                found.setdefault(expecting, _scalar(token))
            expecting = None
            if "id" in found and "method" in found:
                break
        else:
            value = _scalar(token)
            key = value if isinstance(value, str) else None
    request_id, method = found.get("id"), found.get("method")
    return (
        request_id if isinstance(request_id, str | int) else None,
        method if isinstance(method, str) else None,
    )


def _scalar(token: str) -> object:
    try:
        return json.loads(token)
    except ValueError:
        return None


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


async def answer_undecodable(
    incoming: AsyncIterator[SessionMessage | Exception],
    outgoing: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    reply: Any,
) -> None:
    """Pass `incoming` on to `outgoing`, answering (through `reply.send`) the requests that
    did not decode but whose id can still be read."""
    async with outgoing:
        async for item in incoming:
            if isinstance(item, ValidationError):
                text = _input_text(item)
                problem = _problem(item)
                if text is not None and problem is not None:
                    request_id, method = envelope(text)
                    if request_id is not None and method is not None:
                        code, message = problem
                        error = mt.JSONRPCError(
                            jsonrpc="2.0",
                            id=request_id,
                            error=mt.ErrorData(code=code, message=f"{method}: {message}"),
                        )
                        await reply.send(SessionMessage(error))
                        continue
            await outgoing.send(item)
