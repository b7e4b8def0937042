"""A scripted reply in the OpenAI chat-completions wire format (streamed or whole).

Quirks (`Reply.quirks`), each seen on a real server:
- "repeat_id_name": the id and name repeated in every argument delta (vLLM, some proxies);
- "whole_arguments": each call's arguments in one delta;
- "missing_ids": no tool-call id at all;
- "same_id": every call gets the id "call_0" (one reply and every step);
- "usage_in_every_chunk": usage on every chunk, growing (some Ollama versions);
- "usage_final_chunk": usage only on the last chunk with choices (no separate chunk);
- "reasoning_field": reasoning as `reasoning` instead of `reasoning_content` (OpenRouter);
- "no_role": no `role` in the first delta;
- "missing_index": no `index` on tool-call deltas (some Gemini and proxy versions);
- "garbled": an event mid-stream whose data is not JSON (a proxy cutting a line);
- "error_event": an `{"error": ...}` event mid-stream (vLLM, OpenRouter on a failure).
"""

from __future__ import annotations

import json
from typing import Any

from tests.scripted.script import Call, Reply, Say, Think, chunks


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _usage(reply: Reply, output: int | None = None) -> dict[str, int]:
    assert reply.usage is not None
    prompt, completion = reply.usage
    if output is not None:
        completion = output
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _finish(reply: Reply) -> str:
    if reply.finish is not None:
        return reply.finish
    return "tool_calls" if any(isinstance(i, Call) for i in reply.items) else "stop"


def _call_id(reply: Reply, call: Call, index: int, step: int) -> str | None:
    if "missing_ids" in reply.quirks:
        return None
    if "same_id" in reply.quirks:
        return "call_0"
    return call.id or f"call_{step}_{index}"


def stream_events(reply: Reply, model: str, step: int, include_usage: bool) -> list[dict]:
    """The chunks of a streamed reply (without the final `[DONE]`)."""
    events: list[dict] = []
    first = True
    reasoning_key = "reasoning" if "reasoning_field" in reply.quirks else "reasoning_content"

    def delta(body: dict[str, Any]) -> dict[str, Any]:
        nonlocal first
        if first and "no_role" not in reply.quirks:
            body = {"role": "assistant", **body}
        first = False
        return body

    call_index = 0
    for item in reply.items:
        if isinstance(item, Say):
            events += [_chunk(model, delta({"content": c})) for c in chunks(item.text, reply.chunk)]
        elif isinstance(item, Think):
            events += [
                _chunk(model, delta({reasoning_key: c})) for c in chunks(item.text, reply.chunk)
            ]
        else:
            call_id = _call_id(reply, item, call_index, step)
            head: dict[str, Any] = {"index": call_index, "type": "function"}
            if call_id is not None:
                head["id"] = call_id
            head["function"] = {"name": item.name, "arguments": ""}
            pieces = (
                [item.arguments_text]
                if "whole_arguments" in reply.quirks
                else chunks(item.arguments_text, reply.chunk)
            )
            if "whole_arguments" in reply.quirks:
                head["function"]["arguments"] = item.arguments_text
                events.append(_chunk(model, delta({"tool_calls": [head]})))
            else:
                events.append(_chunk(model, delta({"tool_calls": [head]})))
                for piece in pieces:
                    part: dict[str, Any] = {"index": call_index, "function": {"arguments": piece}}
                    if "repeat_id_name" in reply.quirks:
                        if call_id is not None:
                            part["id"] = call_id
                        part["type"] = "function"
                        part["function"]["name"] = item.name
                    events.append(_chunk(model, delta({"tool_calls": [part]})))
            call_index += 1
    if "missing_index" in reply.quirks:
        for event in events:
            for entry in event["choices"][0]["delta"].get("tool_calls", ()):
                entry.pop("index", None)
    if "usage_in_every_chunk" in reply.quirks and reply.usage is not None:
        for n, event in enumerate(events):
            event["usage"] = _usage(reply, output=n + 1)
    if "garbled" in reply.quirks:
        events.insert(len(events) // 2, '{"id": "chatcmpl-scripted", "choi')
    if "error_event" in reply.quirks:
        error = {"error": {"message": "upstream model crashed", "type": "server_error"}}
        events.insert(len(events) // 2, error)
    final = _chunk(model, delta({}), _finish(reply))
    if reply.usage is not None and (
        "usage_final_chunk" in reply.quirks or "usage_in_every_chunk" in reply.quirks
    ):
        final["usage"] = _usage(reply)
    events.append(final)
    if (
        include_usage
        and reply.usage is not None
        and not ({"usage_final_chunk", "usage_in_every_chunk"} & reply.quirks)
    ):
        events.append(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": model,
                "choices": [],
                "usage": _usage(reply),
            }
        )
    return events


def whole_body(reply: Reply, model: str, step: int) -> dict[str, Any]:
    """The JSON body of a non-streamed reply."""
    text = "".join(i.text for i in reply.items if isinstance(i, Say))
    reasoning = "".join(i.text for i in reply.items if isinstance(i, Think))
    tool_calls = []
    for index, call in enumerate(i for i in reply.items if isinstance(i, Call)):
        entry: dict[str, Any] = {
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_text},
        }
        call_id = _call_id(reply, call, index, step)
        if call_id is not None:
            entry["id"] = call_id
        tool_calls.append(entry)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
    }
    if reply.usage is not None:
        body["usage"] = _usage(reply)
    return body


def error_body(status: int, message: str) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": "scripted_error", "code": status}}


def sse(event: dict[str, Any] | str) -> bytes:
    """One server-sent event (a string is sent as it is: garbled data)."""
    data = event if isinstance(event, str) else json.dumps(event)
    return b"data: " + data.encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
