"""Finding and reading windows of lines in a file of any size, without decoding it.

Everything here works on bytes through a seekable handle: lines are counted with
`bytearray.count(b"\\n")` over large chunks read into one reused buffer (close to memory
speed, no allocation per chunk), a window is found by counting and then read and
decoded on its own, and a tail is found by scanning backwards from the end. Memory
stays flat in the file size: one chunk at a time, and each line kept only up to a cap.

A line ends at LF; a lone CR does not end a line. A last line without LF is a line.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from io import BufferedIOBase
from threading import Lock

from deftly.contract.records import frozen
from deftly.features.files.line_endings import EndingCounter, EndingStats

CHUNK = 1 << 20
_SUB_BLOCK = 1 << 16
_FIRST_WINDOW_READ = 1 << 16
_FIRST_TAIL_READ = 1 << 14

IndexKey = tuple[int, int, int, int]


def nth_newline(buf: bytes | bytearray, start: int, n: int, end: int | None = None) -> int:
    """Index of the n-th LF (n >= 1) in `buf[start:end]`, or -1 if there are fewer."""
    stop = len(buf) if end is None else end
    pos = start
    while True:
        block_end = min(pos + _SUB_BLOCK, stop)
        found = buf.count(b"\n", pos, block_end)
        if found >= n or block_end >= stop:
            break
        n -= found
        pos = block_end
    while n > 0:
        index = buf.find(b"\n", pos, stop)
        if index < 0:
            return -1
        n -= 1
        pos = index + 1
    return pos - 1


@frozen
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
        """How many lines the file has (a last line without a newline counts)."""
        if self.size == 0:
            return 0
        return self.newlines + (0 if self.last_byte == 0x0A else 1)

    def line_start(self, handle: BufferedIOBase, line: int) -> int | None:
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
        buffer = bytearray(CHUNK)
        while True:
            got = handle.readinto(buffer)
            if not got:
                return None
            found = buffer.count(b"\n", 0, got)
            if before + found >= target:
                return offset + nth_newline(buffer, 0, target - before, got) + 1
            before += found
            offset += got


@dataclass
class ScanResult:
    """Where the wanted line starts (None: the file ends first), and the index if built."""

    line_start: int | None
    index: LineIndex | None = None


@dataclass
class _Scanner:
    """A forward count from the start of a file, resumable, building a `LineIndex`."""

    handle: BufferedIOBase
    offset: int = 0
    newlines: int = 0
    last_byte: int | None = None
    endings: EndingCounter = field(default_factory=EndingCounter)
    checkpoints: list[tuple[int, int]] = field(default_factory=list)
    buffer: bytearray = field(default_factory=lambda: bytearray(CHUNK))

    def find_line(self, line: int) -> int | None:
        """Scan until the start of `line` is known; None if the file ends first."""
        target = line - 1
        if target == 0:
            return 0
        self.handle.seek(self.offset)
        buffer = self.buffer
        while True:
            got = self.handle.readinto(buffer)
            if not got:
                return None
            found = buffer.count(b"\n", 0, got)
            if self.newlines + found >= target:
                # Found; this chunk stays uncounted so `finish` resumes from its start.
                return self.offset + nth_newline(buffer, 0, target - self.newlines, got) + 1
            self._consume(got, found)

    def finish(self) -> LineIndex:
        """Count the rest of the file."""
        self.handle.seek(self.offset)
        buffer = self.buffer
        while True:
            got = self.handle.readinto(buffer)
            if not got:
                break
            self._consume(got, buffer.count(b"\n", 0, got))
        return LineIndex(
            self.offset,
            self.newlines,
            self.last_byte,
            self.endings.stats,
            tuple(self.checkpoints),
        )

    def _consume(self, got: int, found: int) -> None:
        self.checkpoints.append((self.offset, self.newlines))
        self.endings.feed(self.buffer, got, found)
        self.newlines += found
        self.offset += got
        self.last_byte = self.buffer[got - 1]


def _buffer(size: int | None) -> bytearray:
    """A read buffer for a file of `size` bytes (None: unknown): a small file's is small
    (a megabyte of zeroes costs more than reading the file)."""
    return bytearray(CHUNK if size is None else max(1, min(CHUNK, size + 1)))


def scan_to_line(
    handle: BufferedIOBase, line: int, *, count_all: bool, size: int | None = None
) -> ScanResult:
    """Find where `line` starts by counting from the top; optionally count the whole file.
    `size` is the file's size, if known (only to size the read buffer)."""
    scanner = _Scanner(handle, buffer=_buffer(size))
    start = scanner.find_line(line)
    index = scanner.finish() if count_all else None
    return ScanResult(start, index)


def full_index(handle: BufferedIOBase, *, size: int | None = None) -> LineIndex:
    """The line index of a whole file, read from `handle` in chunks (`size`: as for
    `scan_to_line`)."""
    return _Scanner(handle, buffer=_buffer(size)).finish()


def tail_start(handle: BufferedIOBase, size: int, count: int) -> int:
    """Byte offset where the `count`-th line from the end starts (0: the whole file)."""
    if size == 0 or count <= 0:
        return size
    step = _FIRST_TAIL_READ
    begin = max(0, size - step)
    handle.seek(begin)
    chunk = handle.read(size - begin)
    end = len(chunk) - 1 if chunk.endswith(b"\n") else len(chunk)
    need = count
    while True:
        found = chunk.count(b"\n", 0, end)
        if found >= need:
            index = end
            for _ in range(need):
                index = chunk.rfind(b"\n", 0, index)
            return begin + index + 1
        need -= found
        if begin == 0:
            return 0
        step = min(step * 2, CHUNK)
        pos = begin
        begin = max(0, pos - step)
        handle.seek(begin)
        chunk = handle.read(pos - begin)
        end = len(chunk)


@dataclass
class Window:
    """Lines read from a file: their bytes (without LF), which were cut, what follows."""

    first: int
    data: list[bytes]
    cut: set[int]
    """Indexes (into `data`) of lines longer than the cap, kept only up to it."""
    more: bool
    """Whether at least one more line follows the window."""
    terminated: bool
    """Whether the window's last line ended with LF."""


def read_window(
    handle: BufferedIOBase,
    offset: int,
    first_number: int,
    max_count: int,
    max_line_bytes: int,
    *,
    expected_bytes: int | None = None,
) -> Window:
    """Read up to `max_count` lines starting at byte `offset`, each kept to a byte cap.

    A line longer than the cap is read through (to find its end) but not kept.
    `expected_bytes` (how far the window probably reaches) sizes the first read.
    """
    handle.seek(offset)
    data: list[bytes] = []
    cut: set[int] = set()
    pending = b""
    pending_cut = False
    step = _FIRST_WINDOW_READ
    if expected_bytes is not None:
        step = max(4096, min(expected_bytes + 1, CHUNK))
    while len(data) < max_count:
        chunk = handle.read(step)
        step = min(step * 4, CHUNK)
        if not chunk:
            if pending or pending_cut:
                if pending_cut:
                    cut.add(len(data))
                data.append(pending)
                return Window(first_number, data, cut, False, False)
            return Window(first_number, data, cut, False, bool(data))
        parts = chunk.split(b"\n", max_count - len(data))
        rest = parts.pop()
        if parts:
            head = pending + parts[0] if pending else parts[0]
            parts[0] = head
            if pending_cut:
                cut.add(len(data))
            pending, pending_cut = b"", False
            for i, part in enumerate(parts):
                if len(part) > max_line_bytes:
                    parts[i] = part[:max_line_bytes]
                    cut.add(len(data) + i)
            data.extend(parts)
            if len(data) >= max_count:
                more = bool(rest) or bool(handle.read(1))
                return Window(first_number, data, cut, more, True)
        if not pending_cut:
            pending += rest
            if len(pending) > max_line_bytes:
                pending = pending[:max_line_bytes]
                pending_cut = True
    return Window(first_number, data, cut, bool(handle.read(1)), True)


class LineIndexCache:
    """Recent `LineIndex`es by file identity (device, inode, size, mtime), bounded."""

    def __init__(self, capacity: int = 32):
        self.capacity = capacity
        self._items: OrderedDict[IndexKey, LineIndex] = OrderedDict()
        self._lock = Lock()

    def get(self, key: IndexKey) -> LineIndex | None:
        """The index remembered for `key` (and mark it recently used), or None."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: IndexKey, index: LineIndex) -> None:
        """Remember `index` for `key`, dropping the least recently used beyond the cap."""
        with self._lock:
            self._items[key] = index
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
