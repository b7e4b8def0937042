"""Reading a few top-level fields of JSON text that must not be decoded whole.

Text nested thousands of levels deep exhausts a recursive decoder (`json.loads`, pydantic).
Its envelope, though, is usually fine: a JSON-RPC request's `id` and `method`, a batch
line's `id`, `name` and `arguments`. They are read here token by token, without recursion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null'
)
SCAN_TOKENS = 100_000
"""Tokens looked at; the keys of a real request or call come early."""


def top_level_fields(text: str, keys: Collection[str]) -> dict[str, str]:
    """The raw JSON text of each of `keys` in the top-level object of `text` (the first
    occurrence of each), for the keys found within SCAN_TOKENS tokens. A value that is an
    object or array is returned whole, however deep."""
    depth = 0
    key: str | None = None  # a string at the top level, maybe a key
    expecting: str | None = None  # the key whose value comes next
    start: int | None = None  # where the nested value of `capturing` began
    capturing: str | None = None
    found: dict[str, str] = {}
    for count, match in enumerate(_TOKEN.finditer(text)):
        if count > SCAN_TOKENS or len(found) == len(keys):
            break
        token = match.group()
        if token in "[{":
            depth += 1
            if depth == 2 and expecting in keys and expecting not in found:
                capturing, start = expecting, match.start()
            key = expecting = None
        elif token in "]}":
            depth -= 1
            if depth == 1 and capturing is not None and start is not None:
                found[capturing] = text[start : match.end()]
                capturing = start = None
        elif depth != 1:
            continue
        elif token == ":":
            expecting, key = key, None
        elif token == ",":
            key = expecting = None
        elif expecting is not None:
            if expecting in keys:
                found.setdefault(expecting, token)
            expecting = None
        else:
            value = scalar(token)
            key = value if isinstance(value, str) else None
    return found


def scalar(token: str) -> object:
    """A scalar JSON token's value (None when it is not one: an object or array is never
    decoded here, since it may be nested too deep)."""
    if token[:1] in ("[", "{"):
        return None
    try:
        return json.loads(token)
    except ValueError:
        return None
