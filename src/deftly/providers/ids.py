"""Tool-call ids unique in a conversation, whatever the server sends.

Some servers send no id, some send the same id for every call ("call_0" each step, or the
same id twice in one reply); the APIs then refuse the next request, or pair a result with
the wrong call. Every id a provider yields goes through `CallIds.claim`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from deftly.providers.types import Message

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class CallIds:
    """The ids used so far in one conversation (seeded from its history)."""

    def __init__(self, history: Iterable[Message] = (), *, prefix: str = "call") -> None:
        self._prefix = prefix
        self._seen: set[str] = set()
        for message in history:
            self._seen.update(call.id for call in message.tool_calls)

    def claim(self, raw: str | None, index: int) -> str:
        """A unique, API-safe id for the call at stream position `index` whose server id is
        `raw` (None or empty: the server sent none)."""
        base = _UNSAFE.sub("_", raw)[:64] if raw else f"{self._prefix}_{index}"
        candidate, n = base, 1
        while candidate in self._seen:
            n += 1
            candidate = f"{base}__{n}"
        self._seen.add(candidate)
        return candidate
