"""One command's output: counted, its newest part kept in memory, all of it (up to a cap)
kept in a log file.

Memory stays bounded however much a command prints: the in-memory tail has a fixed size
and bytes waiting to be written are flushed once they pass a small buffer. The log file
is created only when needed (a quick foreground command whose output fits in its result
leaves no file behind): when the buffer overflows, when the command moves to the
background, or when the model's copy was cut and the full text must be somewhere.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import BinaryIO

from deftly.env.base import ExecEnv

log = logging.getLogger(__name__)

BUFFER_BYTES = 256 * 1024


class OutputLog:
    """A command's output: the tail in memory, the whole (up to a cap) in a log file once
    persisted."""

    def __init__(
        self,
        env: ExecEnv,
        path: Path,
        *,
        cap_bytes: int,
        tail_bytes: int,
        buffer_bytes: int = BUFFER_BYTES,
    ) -> None:
        self.env = env
        self.path = path
        self.cap_bytes = cap_bytes
        self.tail_bytes = tail_bytes
        self.buffer_bytes = buffer_bytes
        self.total = 0
        """Bytes the command printed."""
        self.kept = 0
        """Bytes of them in the log (written, or waiting to be)."""
        self.error: str | None = None
        self._tail = bytearray()
        self._pending = bytearray()
        self._file: BinaryIO | None = None
        self._persisted = False
        self._closed = False

    @property
    def persisted(self) -> bool:
        """Whether the log file exists (the output so far is, or will be, in it)."""
        return self._persisted and self.error is None

    @property
    def complete(self) -> bool:
        """Whether the log holds everything printed (not cut at the cap)."""
        return self.kept == self.total

    def feed(self, data: bytes) -> None:
        """Take more output: into the tail, and into the log (or its buffer) up to the cap."""
        size = len(data)
        self.total += size
        if size >= self.tail_bytes:
            self._tail[:] = data[-self.tail_bytes :]
        else:
            self._tail += data
            excess = len(self._tail) - self.tail_bytes
            if excess > 0:
                del self._tail[:excess]
        room = self.cap_bytes - self.kept
        if room <= 0 or self._closed:
            return
        chunk = data if size <= room else data[:room]
        self.kept += len(chunk)
        if self._file is not None:
            self._write(chunk)
            return
        self._pending += chunk
        if len(self._pending) > self.buffer_bytes:
            self.persist()

    def persist(self) -> None:
        """Make sure the log file exists and holds everything kept so far."""
        if self._persisted or self._closed:
            return
        self._persisted = True
        try:
            self.env.make_dirs(self.path.parent)
            self._file = self.env.open_append(self.path)
        except OSError as exc:
            self._fail(exc)
            return
        pending, self._pending = self._pending, bytearray()
        self._write(bytes(pending))

    def _write(self, data: bytes) -> None:
        if self._file is None or not data:
            return
        try:
            self._file.write(data)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.error = f"the log {self.path} could not be written ({exc.strerror or exc})"
        log.warning("%s", self.error)
        self._close_file()

    def flush(self) -> None:
        """Push what was written to the log file to the OS."""
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                self._fail(exc)

    def close(self) -> None:
        """No more output will come through this object (the file stays)."""
        self._closed = True
        self._pending = bytearray()
        self._close_file()

    def _close_file(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()

    def tail(self, limit: int | None = None) -> bytes:
        """The newest bytes printed (at most `limit`, at most the in-memory tail)."""
        if limit is None or limit >= len(self._tail):
            return bytes(self._tail)
        return bytes(self._tail[-limit:]) if limit > 0 else b""

    def tail_text(self, limit: int | None = None) -> str:
        """`tail` decoded as UTF-8 (a character cut at the start dropped)."""
        return decode_tail(self.tail(limit))


def decode_tail(data: bytes) -> str:
    """Decode bytes cut at an arbitrary point: a broken leading character is dropped."""
    start = 0
    while start < min(len(data), 3) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", errors="replace")
