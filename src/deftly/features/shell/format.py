"""Small text helpers shared by the shell tools: durations, sizes, task records."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime


def format_size(size: int) -> str:
    """`512 bytes`, `1.5 KiB`, `16 MiB`."""
    if size < 1024:
        return f"{size} byte" + ("" if size == 1 else "s")
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            text = f"{value:.1f}".removesuffix(".0")
            return f"{text} {unit}"
    raise AssertionError("unreachable")


def local_time(timestamp: float) -> str:
    """A timestamp as local ISO time to the second."""
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")


def record(fields: Iterable[tuple[str, object]]) -> str:
    """`key: value` lines, skipping empty values."""
    return "\n".join(f"{key}: {value}" for key, value in fields if value not in (None, ""))
