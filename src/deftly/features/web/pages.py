"""Long documents in pages: the text FetchURL read is kept for a while (per session), so a
call with `start` reads on without fetching the page again.

A page ends at a line break near its end where there is one, so a paragraph is rarely cut
mid-word; the footer says where the next page starts.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from deftly.contract.records import frozen
from deftly.features.web.content import Document

MAX_KEPT_CHARS = 20_000_000
"""The most text the cache keeps in all (the oldest pages go first)."""


@frozen
class Kept:
    """A document read from a URL, and where it really came from."""

    url: str
    document: Document
    at: float


class PageCache:
    """Documents by the URL asked for, each kept `ttl` seconds (0: none kept)."""

    def __init__(
        self, ttl: float, *, clock: Callable[[], float] = time.monotonic, max_entries: int = 32
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self.max_entries = max_entries
        self._kept: OrderedDict[str, Kept] = OrderedDict()

    def get(self, url: str) -> Kept | None:
        """The document read from `url` less than `ttl` seconds ago, or None."""
        kept = self._kept.get(url)
        if kept is None:
            return None
        if self.clock() - kept.at > self.ttl:
            del self._kept[url]
            return None
        self._kept.move_to_end(url)
        return kept

    def put(self, url: str, final_url: str, document: Document) -> None:
        """Keep `document` (read from `final_url` when `url` was asked for)."""
        if self.ttl <= 0:
            return
        self._kept[url] = Kept(final_url, document, self.clock())
        self._kept.move_to_end(url)
        total = sum(len(k.document.text) for k in self._kept.values())
        while self._kept and (len(self._kept) > self.max_entries or total > MAX_KEPT_CHARS):
            _, dropped = self._kept.popitem(last=False)
            total -= len(dropped.document.text)


def page_end(text: str, start: int, max_chars: int) -> int:
    """Where the page of `text` starting at `start` ends: at most `max_chars` on, at the
    last line break in its final fifth when there is one."""
    end = start + max_chars
    if end >= len(text):
        return len(text)
    floor = start + (max_chars * 4) // 5
    cut = text.rfind("\n", floor, end)
    return cut + 1 if cut >= floor else end


def footer(start: int, end: int, total: int) -> str | None:
    """The line after a page that is not the whole document, or None."""
    if start == 0 and end >= total:
        return None
    if end >= total:
        return f"[Characters {start:,}–{end:,} of {total:,}: the end of the document.]"
    return (
        f"[Characters {start:,}–{end:,} of {total:,}. To read on, call FetchURL with the same "
        f"url and start={end}.]"
    )
