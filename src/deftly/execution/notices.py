"""Notices for the model that ride on the next result: a background task ended, say.

The executor knows nothing of what produces them. Anything with `take_notices()` (the
runtime registers its background-task manager) is drained when a result is finished, and
what it gives is appended to that result's `note`, the model-only side channel, so a model
told "you will be notified when it ends" is, on whatever call it makes next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Notice(Protocol):
    @property
    def message(self) -> str: ...


class NoticeSource(Protocol):
    def take_notices(self) -> Sequence[Notice]:
        """The notices not given out yet; each is given out once."""
        ...


def with_notices(note: str | None, messages: Sequence[str]) -> str | None:
    """`note` with the pending notices added after it, one per line."""
    if not messages:
        return note
    lines = [f"[notice] {message}" for message in messages]
    return "\n".join([note, *lines] if note else lines)
