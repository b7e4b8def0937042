"""The stale-read guard: which files this runtime has read or written, and as what.

After a Read (or a Write/Edit, which counts as reading what was just written) the file's
size, mtime and inode are remembered, and for files up to a size limit a hash of their
content. Before Edit or an overwriting Write, a file that was seen and has changed since
is refused, so a model never clobbers an edit someone else made after it looked. A
changed stamp with an unchanged hash (a `touch`, a checkout of the same content, an
editor's save-as-is) is not a change.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from threading import Lock

from deftly.contract.fs import FileStat
from deftly.contract.records import frozen


def same_stat(a: FileStat, b: FileStat) -> bool:
    """Do two stats of a file show it unchanged (same size, mtime and inode)?"""
    return (a.st_size, a.st_mtime_ns, a.st_ino) == (b.st_size, b.st_mtime_ns, b.st_ino)


@frozen
class Stamp:
    """What the session last saw of a file: size, mtime, inode, maybe a content hash."""

    size: int
    mtime_ns: int
    inode: int
    digest: bytes | None = None

    def same_stat(self, st: FileStat) -> bool:
        """Whether `st` shows the file as it was stamped (same size, mtime and inode)."""
        return (self.size, self.mtime_ns, self.inode) == (st.st_size, st.st_mtime_ns, st.st_ino)


def content_digest(data: bytes | bytearray | memoryview) -> bytes:
    """The hash the stale-read guard compares contents by (SHA-256)."""
    return hashlib.sha256(data).digest()


class FileTracker:
    """Remembers up to `capacity` files (least recently used are forgotten first).

    Shared by the file tools of one runtime; thread-safe (tools work in worker threads).
    """

    def __init__(self, hash_max_bytes: int = 16 * 1024 * 1024, capacity: int = 10_000):
        self.hash_max_bytes = hash_max_bytes
        self.capacity = capacity
        self._stamps: OrderedDict[str, Stamp] = OrderedDict()
        self._lock = Lock()

    def wants_digest(self, size: int) -> bool:
        """Whether a file of `size` bytes is small enough to keep a content hash of."""
        return size <= self.hash_max_bytes

    def stamp(self, path: Path, st: FileStat, content: bytes | bytearray | None = None) -> None:
        """Remember `path` as seen in the state `st` (with its content, when given)."""
        digest = (
            content_digest(content)
            if content is not None and self.wants_digest(len(content))
            else None
        )
        self.stamp_digest(path, st, digest)

    def stamp_digest(self, path: Path, st: FileStat, digest: bytes | None) -> None:
        """Remember `path` as seen in the state `st`, with an already computed hash."""
        key = os.fspath(path)
        with self._lock:
            self._stamps[key] = Stamp(st.st_size, st.st_mtime_ns, st.st_ino, digest)
            self._stamps.move_to_end(key)
            while len(self._stamps) > self.capacity:
                self._stamps.popitem(last=False)

    def get(self, path: Path) -> Stamp | None:
        """What was last seen of `path`, or None."""
        with self._lock:
            return self._stamps.get(os.fspath(path))

    def forget(self, path: Path) -> None:
        """Drop what was seen of `path` (it will count as never read)."""
        with self._lock:
            self._stamps.pop(os.fspath(path), None)

    def is_stale(self, path: Path, st: FileStat, current: bytes | bytearray | None = None) -> bool:
        """Has `path` changed since it was last seen? Unseen files are never stale.

        `current` is the file's content now, when the caller has it (Edit always does);
        it settles a changed stamp when the content was hashed back then.
        """
        stamp = self.get(path)
        if stamp is None or stamp.same_stat(st):
            return False
        if stamp.digest is None or current is None or stamp.size != len(current):
            return True
        return content_digest(current) != stamp.digest
