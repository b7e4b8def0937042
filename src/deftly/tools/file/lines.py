"""Finding and reading windows of lines in a file of any size, without decoding it.

Everything here works on bytes through a seekable handle: lines are counted with
`bytes.count(b"\\n")` over large chunks (close to memory speed), a window is found by
counting and then read and decoded on its own, and a tail is found by scanning backwards
from the end. Memory stays flat in the file size: one chunk at a time, and each line
kept only up to a cap.

A line ends at LF; a lone CR does not end a line. A last line without LF is a line.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from threading import Lock
from typing import BinaryIO

from deftly.tools.file.line_endings import EndingCounter, EndingStats

CHUNK = 1 << 20
_SUB_BLOCK = 1 << 16
_FIRST_WINDOW_READ = 1 << 16
_FIRST_TAIL_READ = 1 << 14


def nth_newline(buf: bytes, start: int, n: int) -> int:
    """Index of the n-th LF (n >= 1) in `buf[start:]`, or -1 if there are fewer."""
    end = len(buf)
    pos = start
    while True:
        block_end = min(pos + _SUB_BLOCK, end)
        found = buf.count(b"\n", pos, block_end)
        if found >= n or block_end >= end:
            break
        n -= found
        pos = block_end
    while n > 0:
        index = buf.find(b"\n", pos, end)
        if index < 0:
            return -1
        n -= 1
        pos = index + 1
    return pos - 1


@dataclass(frozen=True, slots=True)
class LineIndex:
    """What one full scan of a file learned, kept to answer later reads quickly.

    `checkpoints` are (byte offset, LFs before it) pairs at chunk starts, so a window
    deep in the file is found by seeking to the nearest one and counting one chunk.
    """

    size: int
    newlines: int
    last_byte: int | None
    stats: EndingStats
    checkpoints: tuple[tuple[int, int], ...]

    @property
    def total_lines(self) -> int:
        if self.size == 0:
            return 0
        return self.newlines + (0 if self.last_byte == 0x0A else 1)

    def line_start(self, handle: BinaryIO, line: int) -> int | None:
        """Byte offset where `line` (1-based) starts, or None past the last line."""
        if line > self.total_lines:
            return None
        if line == 1:
            return 0
        target = line - 1  # LFs before the line
        keys = [before for _, before in self.checkpoints]
        at = bisect.bisect_right(keys, target - 1) - 1
        offset, before = self.checkpoints[at] if at >= 0 else (0, 0)
        handle.seek(offset)
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                return None
            found = chunk.count(b"\n")
            if before + found >= target:
                index = nth_newline(chunk, 0, target - before)
                return offset + index + 1
            before += found
            offset += len(chunk)


@dataclass
class ScanResult:
    """How far a forward scan got: the start of the wanted line, or the file's end."""

    line_start: int | None
    index: LineIndex | None = None


@dataclass
class _Scanner:
    """A forward count from the start of a file, resumable, building a `LineIndex`."""

    handle: BinaryIO
    offset: int = 0
    newlines: int = 0
    last_byte: int | None = None
    endings: EndingCounter = field(default_factory=EndingCounter)
    checkpoints: list[tuple[int, int]] = field(default_factory=list)

    def find_line(self, line: int) -> int | None:
        """Scan until the start of `line` is known; None if the file ends first."""
        target = line - 1
        if target == 0:
            return 0
        self.handle.seek(self.offset)
        while True:
            chunk = self.handle.read(CHUNK)
            if not chunk:
                return None
            found = chunk.count(b"\n")
            if self.newlines + found >= target:
                index = nth_newline(chunk, 0, target - self.newlines)
                start = self.offset + index + 1
                # Resume counting later from this chunk's start (kept uncounted).
                return start
            self._consume(chunk, found)

    def finish(self) -> LineIndex:
        """Count the rest of the file."""
        self.handle.seek(self.offset)
        while True:
            chunk = self.handle.read(CHUNK)
            if not chunk:
                break
            self._consume(chunk, chunk.count(b"\n"))
        return LineIndex(
            self.offset,
            self.newlines,
            self.last_byte,
            self.endings.stats,
            tuple(self.checkpoints),
        )

    def _consume(self, chunk: bytes, found: int) -> None:
        self.checkpoints.append((self.offset, self.newlines))
        self.endings.feed(chunk)
        self.newlines += found
        self.offset += len(chunk)
        self.last_byte = chunk[-1]


def scan_to_line(handle: BinaryIO, line: int, *, count_all: bool) -> ScanResult:
    """Find where `line` starts by counting from the top; optionally count the whole file."""
    scanner = _Scanner(handle)
    start = scanner.find_line(line)
    index = scanner.finish() if count_all else None
    return ScanResult(start, index)


def full_index(handle: BinaryIO) -> LineIndex:
    return _Scanner(handle).finish()


def tail_start(handle: BinaryIO, size: int, count: int) -> int:
    """Byte offset where the `count`-th line from the end starts (0: the whole file)."""
    if size == 0 or count <= 0:
        return size
    handle.seek(size - 1)
    end = size - 1 if handle.read(1) == b"\n" else size
    need = count
    pos = end
    step = _FIRST_TAIL_READ
    while pos > 0:
        begin = max(0, pos - step)
        handle.seek(begin)
        chunk = handle.read(pos - begin)
        found = chunk.count(b"\n")
        if found >= need:
            index = len(chunk)
            for _ in range(need):
                index = chunk.rfind(b"\n", 0, index)
            return begin + index + 1
        need -= found
        pos = begin
        step = min(step * 2, CHUNK)
    return 0


@dataclass(frozen=True, slots=True)
class RawLine:
    """One line's bytes without its LF; `cut` when the line was longer than was kept."""

    number: int
    data: bytes
    cut: bool


@dataclass
class Window:
    lines: list[RawLine]
    more: bool
    """Whether at least one more line follows the window."""


def read_window(
    handle: BinaryIO, offset: int, first_number: int, max_count: int, max_line_bytes: int
) -> Window:
    """Read up to `max_count` lines starting at byte `offset`, each kept to a byte cap.

    A line longer than the cap is read through (to find its end) but not kept.
    """
    handle.seek(offset)
    lines: list[RawLine] = []
    pending = bytearray()
    cut = False
    position = offset
    step = _FIRST_WINDOW_READ
    number = first_number
    while len(lines) < max_count:
        chunk = handle.read(step)
        step = min(step * 2, CHUNK)
        if not chunk:
            if pending or cut:
                lines.append(RawLine(number, bytes(pending), cut))
            return Window(lines, False)
        pos = 0
        while len(lines) < max_count:
            newline = chunk.find(b"\n", pos)
            piece_end = len(chunk) if newline < 0 else newline
            room = max_line_bytes - len(pending)
            if room > 0:
                pending += chunk[pos : min(piece_end, pos + room)]
            if piece_end - pos > max(room, 0):
                cut = True
            if newline < 0:
                pos = len(chunk)
                break
            lines.append(RawLine(number, bytes(pending), cut))
            number += 1
            pending.clear()
            cut = False
            pos = newline + 1
        position += pos
    return Window(lines, _has_more(handle, position))


def _has_more(handle: BinaryIO, position: int) -> bool:
    handle.seek(position)
    return bool(handle.read(1))


class LineIndexCache:
    """Recent `LineIndex`es by file identity (device, inode, size, mtime), bounded."""

    def __init__(self, capacity: int = 32):
        self.capacity = capacity
        self._items: OrderedDict[tuple[int, int, int, int], LineIndex] = OrderedDict()
        self._lock = Lock()

    def get(self, key: tuple[int, int, int, int]) -> LineIndex | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[int, int, int, int], index: LineIndex) -> None:
        with self._lock:
            self._items[key] = index
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
