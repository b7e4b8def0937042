"""The conversation as providers must receive it.

The loop appends messages as things happen; `project` makes the list every API accepts:
each assistant message with tool calls is followed by exactly one result per call (a
missing one is synthesised, an orphan or duplicate dropped), leading non-user messages are
dropped, consecutive user messages are merged, and an assistant message with nothing in it
is dropped. The stored history is never rewritten by this: it is what happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from deftly.providers.types import Message, TextPart

MISSING_RESULT = (
    "<system>ERROR: the result of this tool call is not available. Do not assume the call "
    "succeeded.</system>"
)


PARAGRAPH = TextPart("\n\n")
"""What separates two user messages merged into one."""


def project(messages: Sequence[Message]) -> list[Message]:
    """The history in the shape every provider accepts (see the module docstring)."""
    results: dict[str, Message] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id is not None:
            results.setdefault(message.tool_call_id, message)
    out: list[Message] = []
    answered: set[str] = set()
    for message in messages:
        if message.role == "tool":
            continue  # placed right after its call below
        if message.role == "assistant":
            if not message.tool_calls and not any(_has_content(p) for p in message.parts):
                continue
            if not out:
                continue  # a conversation starts with the user
            out.append(message)
            for call in message.tool_calls:
                if call.id in answered:
                    continue
                answered.add(call.id)
                out.append(
                    results.get(call.id)
                    or Message(
                        "tool",
                        (TextPart(MISSING_RESULT),),
                        tool_call_id=call.id,
                        name=call.name,
                        is_error=True,
                    )
                )
            continue
        if out and out[-1].role == message.role == "user":
            # a blank line between them, so two prompts never run together as one text
            parts = (*out[-1].parts, PARAGRAPH, *message.parts)
            out[-1] = Message("user", parts, meta=out[-1].meta)
            continue
        out.append(message)
    return out


def _has_content(part: object) -> bool:
    return not isinstance(part, TextPart) or bool(part.text.strip())
