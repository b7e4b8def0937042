"""Compaction: the older part of a history replaced by a summary the model writes.

The split never separates an assistant message from its tool results: the kept part
starts with a user message or with an assistant message whose results all follow it. The
summary is asked for over a plain-text rendering of the older part (every provider takes
it: no tool calls to pair, no tool list needed), bounded so the request fits the window.
"""

from __future__ import annotations

from collections.abc import Sequence

from deftly.agent.context_elide import assistant_indices
from deftly.providers.types import ImagePart, Message, Part, TextPart, ThinkPart

COMPACTED = "compacted"
"""The `meta` key of a compaction's first message: how many of its parts are the task."""

SUMMARY_SYSTEM = (
    "You write the working notes of a coding session for the agent that will continue it. "
    "They replace the conversation: be complete and exact, and do not call tools."
)

SUMMARY_PROMPT = """\
Above is the older part of a coding session between a user and you, an agent with tools.
This conversation is about to be compacted: your summary will REPLACE it. Afterwards you
will see only the user's original task, this summary and the most recent steps, so write
everything you need to carry on without asking again:

1. The task: what the user asked for, with every requirement and constraint they gave.
2. Decisions made so far, and why.
3. Files touched: read, created or changed (exact paths, and what changed in each).
4. What is done, and what is left to do (the next steps, in order).
5. Open questions, and errors not yet solved (exact messages).

Be specific: exact paths, names, commands and error messages. Write only the summary."""

TOOL_OUTPUT_CHARS = 2_000
"""How much of each tool output the rendering for the summary shows."""


def kept_start(messages: Sequence[Message], keep: int) -> int:
    """Where the kept part begins when the last `keep` steps stay verbatim: at the first
    of them, moved back over the user messages just before it (that turn's prompt), and
    back to a call's assistant message while a kept tool result answers a call made
    before it. 0 when there are fewer steps than `keep` (nothing to compact)."""
    steps = assistant_indices(messages)
    if keep <= 0:
        start = len(messages)
    elif len(steps) < keep:
        return 0
    else:
        start = steps[-keep]
    while start > 0 and messages[start - 1].role == "user":
        start -= 1
    owner: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            owner.setdefault(call.id, index)
    while True:
        while (
            start < len(messages)
            and messages[start].role == "tool"
            and not (owner.get(messages[start].tool_call_id or "", start) < start)
        ):
            start += 1  # a result answering nothing kept: it goes with the older part
        earlier = [
            owner[m.tool_call_id]
            for m in messages[start:]
            if m.role == "tool" and m.tool_call_id in owner and owner[m.tool_call_id] < start
        ]
        if not earlier:
            return start
        start = min(earlier)


def first_user(messages: Sequence[Message]) -> int | None:
    """The index of the conversation's first user message."""
    return next((i for i, m in enumerate(messages) if m.role == "user"), None)


def task_parts(message: Message) -> tuple[Part, ...]:
    """The original task a first user message carries (after a compaction, only the task
    part of the compaction's message)."""
    count = message.meta.get(COMPACTED)
    if isinstance(count, int) and 0 <= count <= len(message.parts):
        return message.parts[:count]
    return message.parts


def head_message(task: tuple[Part, ...], note: str, state: str | None, **meta: object) -> Message:
    """The message a compacted history starts with: the task verbatim, then `note` (the
    summary, or what was dropped) and the session state in a `<system>` block."""
    block = note.strip()
    if state:
        block += f"\n\nSession state: {state.strip()}"
    parts = (*task, TextPart(f"\n\n<system>{block}</system>"))
    return Message("user", parts, meta={COMPACTED: len(task), **meta})


def summary_note(summary: str, dropped: int) -> str:
    """The `<system>` text carrying the model's summary."""
    return (
        f"The conversation so far ({dropped:,} messages) was compacted to fit the context "
        "window. Your summary of it:\n\n" + summary.strip()
    )


def dropped_note(dropped: int, reason: str) -> str:
    """The `<system>` text in place of a summary that could not be written."""
    return (
        f"{dropped:,} earlier messages of this conversation were dropped to fit the context "
        f"window (no summary could be written: {reason}). The task above and the recent "
        "steps below are what is left: re-read files or ask the user if you need what the "
        "dropped part held."
    )


def render(messages: Sequence[Message], budget: int) -> str:
    """The older part as plain text for the summarizer, at most about `budget`
    characters: tool outputs cut short, and the oldest messages after the first left out
    when it is still too long."""
    blocks = [_render_one(m) for m in messages]
    total = sum(len(b) + 2 for b in blocks)
    if total <= budget or len(blocks) <= 1:
        return "\n\n".join(blocks)[: max(budget, 0)] if total > budget else "\n\n".join(blocks)
    first, rest = blocks[0][: budget // 4], blocks[1:]
    room = budget - len(first)
    kept: list[str] = []
    for block in reversed(rest):
        if len(block) + 2 > room:
            break
        kept.append(block)
        room -= len(block) + 2
    left_out = len(rest) - len(kept)
    note = f"[... {left_out:,} older messages left out ...]" if left_out else ""
    return "\n\n".join([first, *([note] if note else []), *reversed(kept)])


def _render_one(message: Message) -> str:
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            text = part.text
            if message.role == "tool" and len(text) > TOOL_OUTPUT_CHARS:
                more = len(text) - TOOL_OUTPUT_CHARS
                text = text[:TOOL_OUTPUT_CHARS] + f"\n[... {more:,} more characters]"
            lines.append(text)
        elif isinstance(part, ImagePart):
            lines.append(f"[an image ({part.media_type})]")
        elif isinstance(part, ThinkPart) and part.text:
            lines.append(f"(thinking) {part.text[:TOOL_OUTPUT_CHARS]}")
    lines.extend(
        f"[tool call {call.name} {call.arguments[:TOOL_OUTPUT_CHARS]}]"
        for call in message.tool_calls
    )
    if message.role == "tool":
        label = f"TOOL RESULT ({message.name or 'tool'}{', error' if message.is_error else ''})"
    else:
        label = message.role.upper()
    return f"{label}:\n" + "\n".join(lines)
