"""What a scripted model replies, independent of the wire format.

A script is a list of steps, one per request (or a function of the request's JSON body
that returns the step, for scripts keyed by the system prompt or an agent id). A step is a
`Reply` (text, reasoning and tool calls in the order given, cut into chunks), or a
`Fail` (an HTTP error), or a `Reply` with `drop_after` (the connection closes mid-stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True)
class Say:
    """Text the model writes."""

    text: str


@dataclass(frozen=True)
class Think:
    """Reasoning (Anthropic: a thinking block with `signature`; OpenAI-compatible servers:
    `reasoning_content`)."""

    text: str
    signature: str = "sig-1"


@dataclass(frozen=True)
class Call:
    """A tool call. `arguments` is a dict (sent as JSON) or raw text (sent as is, so a
    test can send malformed JSON); `id` None lets the wire pick one (or omit it, with the
    `missing_ids` quirk)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_text(self) -> str:
        """The arguments as the model streams them."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


Item: TypeAlias = Say | Think | Call


@dataclass(frozen=True)
class Reply:
    """One model reply.

    `chunk`: characters per delta (text and arguments), so one call spans many chunks.
    `usage`: (input, output) tokens, or None to send no usage at all.
    `finish`: the wire's finish reason (None: derived — tool calls or end of turn).
    `drop_after`: close the connection after this many stream events (a broken stream).
    `stream`: False answers as if the request had not asked for a stream... only when
    the client asked for none; a streaming request always gets a stream.
    `quirks`: wire-specific oddities (see each wire module).
    `delay`: seconds to wait before each event (to let a test act mid-stream).
    """

    items: Sequence[Item] = ()
    chunk: int = 8
    usage: tuple[int, int] | None = (100, 20)
    finish: str | None = None
    drop_after: int | None = None
    quirks: frozenset[str] = frozenset()
    delay: float = 0.0
    gate: Any = None
    """A `threading.Event` the server waits on before sending the final events (so a test
    can check what happened while the model was still streaming)."""


@dataclass(frozen=True)
class Fail:
    """An HTTP error reply."""

    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


Step: TypeAlias = Reply | Fail
Script: TypeAlias = Sequence[Step] | Callable[[dict[str, Any]], Step]


def say(text: str, **options: Any) -> Reply:
    """A reply of plain text (ends the turn)."""
    return Reply((Say(text),), **options)


def calls(*items: Call, **options: Any) -> Reply:
    """A reply of tool calls only."""
    return Reply(tuple(items), **options)


def chunks(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters (one piece when it is empty)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
