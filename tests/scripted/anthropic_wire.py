"""A scripted reply in the Anthropic messages wire format (streamed or whole).

Quirks (`Reply.quirks`):
- "cache_read=N", "cache_write=N": prompt-cache usage (`cache_read_input_tokens`,
  `cache_creation_input_tokens`) beside `input_tokens`, as the API reports it;
- "usage_in_delta": `message_delta` repeats the input and cache counts (newer API versions);
- "redacted": each `Think` is sent as a `redacted_thinking` block whose data is its text;
- "error_event=TYPE": an `error` event of that type (e.g. overloaded_error) after the first
  block's first delta, and then the stream ends (the API fails mid-reply like this).
"""

from __future__ import annotations

import json
from typing import Any

from tests.scripted.script import Call, Reply, Say, Think, chunks


def _stop_reason(reply: Reply) -> str:
    if reply.finish is not None:
        return reply.finish
    return "tool_use" if any(isinstance(i, Call) for i in reply.items) else "end_turn"


def _usage(reply: Reply) -> tuple[int, int]:
    return reply.usage if reply.usage is not None else (0, 0)


def _quirk(reply: Reply, name: str) -> str | None:
    for quirk in reply.quirks:
        key, _, value = quirk.partition("=")
        if key == name:
            return value
    return None


def _cache(reply: Reply) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, field in (
        ("cache_read", "cache_read_input_tokens"),
        ("cache_write", "cache_creation_input_tokens"),
    ):
        value = _quirk(reply, name)
        if value is not None:
            out[field] = int(value)
    return out


def _call_id(call: Call, index: int, step: int) -> str:
    return call.id or f"toolu_{step}_{index}"


def stream_events(reply: Reply, model: str, step: int) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs of a streamed reply."""
    prompt = _usage(reply)[0]
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{step}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": prompt, "output_tokens": 1, **_cache(reply)},
                },
            },
        )
    ]
    call_index = 0
    for index, item in enumerate(reply.items):
        if isinstance(item, Say):
            block: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in chunks(item.text, reply.chunk)]
        elif isinstance(item, Think) and "redacted" in reply.quirks:
            block = {"type": "redacted_thinking", "data": item.text}
            deltas = []
        elif isinstance(item, Think):
            block = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": c} for c in chunks(item.text, reply.chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": item.signature})
        else:
            block = {
                "type": "tool_use",
                "id": _call_id(item, call_index, step),
                "name": item.name,
                "input": {},
            }
            deltas = [
                {"type": "input_json_delta", "partial_json": c}
                for c in chunks(item.arguments_text, reply.chunk)
            ]
            call_index += 1
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": _delta_usage(reply),
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    error = _quirk(reply, "error_event")
    if error is not None:
        body = {"type": "error", "error": {"type": error, "message": f"scripted {error}"}}
        events = [*events[: min(3, len(events) - 1)], ("error", body)]
    return events


def _delta_usage(reply: Reply) -> dict[str, int]:
    prompt, completion = _usage(reply)
    if "usage_in_delta" in reply.quirks:
        return {"input_tokens": prompt, "output_tokens": completion, **_cache(reply)}
    return {"output_tokens": completion}


def whole_body(reply: Reply, model: str, step: int) -> dict[str, Any]:
    """The JSON body of a non-streamed reply."""
    content: list[dict[str, Any]] = []
    call_index = 0
    for item in reply.items:
        if isinstance(item, Say):
            content.append({"type": "text", "text": item.text})
        elif isinstance(item, Think) and "redacted" in reply.quirks:
            content.append({"type": "redacted_thinking", "data": item.text})
        elif isinstance(item, Think):
            content.append({"type": "thinking", "thinking": item.text, "signature": item.signature})
        else:
            arguments: Any = item.arguments if isinstance(item.arguments, dict) else {}
            content.append(
                {
                    "type": "tool_use",
                    "id": _call_id(item, call_index, step),
                    "name": item.name,
                    "input": arguments,
                }
            )
            call_index += 1
    prompt, completion = _usage(reply)
    return {
        "id": f"msg_{step}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion, **_cache(reply)},
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """An Anthropic-style error body."""
    kind = {
        429: "rate_limit_error",
        529: "overloaded_error",
        401: "authentication_error",
        404: "not_found_error",
    }.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def sse(name: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
