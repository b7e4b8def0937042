"""Neutral messages → an Anthropic messages request body (plain dicts; no SDK import).

What the API insists on, handled here once:
- the roles alternate and the first is `user`: consecutive user messages (and runs of
  tool results) are merged, a `system` message in the history becomes user text in a
  `<system>` block, a conversation that starts with the assistant gets a user line first;
- every tool result of an assistant turn comes in the next user message, before any text
  (a `tool_use` without a result gets one saying so; a result without its call becomes
  text, since the API refuses a `tool_result` it cannot pair);
- `tool_use.input` is an object: arguments that are not a JSON object are sent as
  `{"_raw": text}` (the API does not check old inputs against the schema; the model sees
  what it wrote, and the tool result already told it the arguments were invalid);
- thinking blocks go back first in their assistant message with their signature unchanged
  (the API verifies it); reasoning without a signature (another provider's) is dropped;
- no empty text blocks.

Prompt caching: `cache_control` on the system block, on the last tool, and on the last
block of the last *stable* message — the one before the newest user message, i.e. the
prefix the next request repeats. Three breakpoints (the API allows four).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from deftly.providers.types import ImagePart, Message, TextPart, ThinkPart, ToolSpec

Block = dict[str, Any]
WireMessage = dict[str, Any]

CACHE: dict[str, str] = {"type": "ephemeral"}

MISSING_RESULT = "No result: the call did not run (the turn was interrupted before it did)."

NO_IMAGES = "[an image ({media}) was left out: this model does not take images in tool results]"


def encode_system(system: str) -> list[Block]:
    """The system prompt as one cached text block (none when it is blank)."""
    if not system.strip():
        return []
    return [{"type": "text", "text": system, "cache_control": dict(CACHE)}]


def encode_tools(tools: Sequence[ToolSpec]) -> list[Block]:
    """The tool list, the last one carrying the cache breakpoint for the whole list (the
    API wants each schema to say `"type": "object"`)."""
    out: list[Block] = [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": {"type": "object", **tool.parameters},
        }
        for tool in tools
    ]
    if out:
        out[-1]["cache_control"] = dict(CACHE)
    return out


def tool_input(arguments: str) -> dict[str, Any]:
    """The `input` object for a call's arguments text (see the module docstring)."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def encode_messages(
    messages: Iterable[Message], *, images_in_tool_results: bool = True
) -> list[WireMessage]:
    """The conversation in the API's shape, with the stable-prefix cache breakpoint.

    Signed thinking blocks are always sent: the API ignores those of earlier turns and
    requires those of the current tool-use turn when thinking is on."""
    out: list[WireMessage] = []
    for message in messages:
        if message.role == "assistant":
            blocks = _assistant_blocks(message)
            if blocks:
                _append(out, "assistant", blocks)
        elif message.role == "tool":
            _append(out, "user", [_tool_result(message, images_in_tool_results)])
        elif message.role == "system":
            text = message.text.strip()
            if text:
                _append(out, "user", [{"type": "text", "text": f"<system>{text}</system>"}])
        else:
            blocks = _user_blocks(message)
            if blocks:
                _append(out, "user", blocks)
    out = _pair_results(out)
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [_text("(the conversation so far)")]})
    _mark_stable(out)
    return out


# -- blocks --------------------------------------------------------------------------------


def _text(text: str) -> Block:
    return {"type": "text", "text": text}


def _image(part: ImagePart) -> Block:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
    }


def _assistant_blocks(message: Message) -> list[Block]:
    thinking: list[Block] = []
    rest: list[Block] = []
    for part in message.parts:
        if isinstance(part, ThinkPart):
            if part.redacted:
                thinking.append({"type": "redacted_thinking", "data": part.redacted})
            elif part.signature:
                thinking.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
        elif isinstance(part, TextPart) and part.text.strip():
            rest.append(_text(part.text))
    rest.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c.arguments)}
        for c in message.tool_calls
    )
    return thinking + rest


def _user_blocks(message: Message) -> list[Block]:
    blocks: list[Block] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                blocks.append(_text(part.text))
        elif isinstance(part, ImagePart):
            blocks.append(_image(part))
    return blocks


def _tool_result(message: Message, images: bool) -> Block:
    content: list[Block] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                content.append(_text(part.text))
        elif isinstance(part, ImagePart):
            content.append(
                _image(part) if images else _text(NO_IMAGES.format(media=part.media_type))
            )
    if not content:
        content.append(_text("(no output)"))
    block: Block = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id or "",
        "content": content,
    }
    if message.is_error:
        block["is_error"] = True
    return block


# -- the conversation ----------------------------------------------------------------------


def _append(out: list[WireMessage], role: str, blocks: list[Block]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": list(blocks)})


def _pair_results(out: list[WireMessage]) -> list[WireMessage]:
    """Each assistant turn's results, first in the next user message; a call without a
    result gets one, a result without a call becomes text."""
    fixed: list[WireMessage] = []
    for index, message in enumerate(out):
        if message["role"] != "user":
            fixed.append(message)
            continue
        previous = out[index - 1] if index > 0 else None
        wanted = _call_ids(previous)
        results: list[Block] = []
        others: list[Block] = []
        for block in message["content"]:
            if block.get("type") != "tool_result":
                others.append(block)
            elif block["tool_use_id"] in wanted and not _has(results, block["tool_use_id"]):
                results.append(block)
            else:
                others.append(_orphan(block))
        results += [_missing(call_id) for call_id in wanted if not _has(results, call_id)]
        ordered = sorted(results, key=lambda b: wanted.index(b["tool_use_id"]))
        fixed.append({"role": "user", "content": ordered + others})
    if fixed and fixed[-1]["role"] == "assistant":
        ids = _call_ids(fixed[-1])
        if ids:  # the conversation ends on calls that never ran
            fixed.append({"role": "user", "content": [_missing(i) for i in ids]})
    return fixed


def _call_ids(message: WireMessage | None) -> list[str]:
    if message is None or message["role"] != "assistant":
        return []
    return [b["id"] for b in message["content"] if b.get("type") == "tool_use"]


def _has(results: list[Block], call_id: str) -> bool:
    return any(b["tool_use_id"] == call_id for b in results)


def _missing(call_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": [_text(MISSING_RESULT)],
        "is_error": True,
    }


def _orphan(block: Block) -> Block:
    texts = [b["text"] for b in block["content"] if b.get("type") == "text"]
    return _text(f"[the result of an earlier call {block['tool_use_id']}]\n" + "\n".join(texts))


def thinking_possible(out: Sequence[WireMessage]) -> bool:
    """Whether thinking may be on for this conversation: the API refuses it when the
    current tool-use turn's last assistant message does not start with a thinking block
    (its steps ran with thinking off, or came from another provider)."""
    if not out or out[-1]["role"] != "user":
        return True
    results = [b for b in out[-1]["content"] if b.get("type") == "tool_result"]
    if not results or len(out) < 2:
        return True
    first = out[-2]["content"][0] if out[-2]["content"] else {}
    return first.get("type") in ("thinking", "redacted_thinking")


def _mark_stable(out: list[WireMessage]) -> None:
    """`cache_control` on the last cacheable block of the message before the newest user
    message (thinking blocks cannot carry one)."""
    last_user = max((i for i, m in enumerate(out) if m["role"] == "user"), default=-1)
    for message in reversed(out[:last_user] if last_user > 0 else []):
        for block in reversed(message["content"]):
            if block.get("type") not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(CACHE)
                return
