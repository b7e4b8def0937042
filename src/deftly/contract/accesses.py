"""What a call will touch, declared before it runs.

The scheduler reads these to decide which calls may run at the same time; the permission
engine reads them to know which paths a call writes. A call that declares nothing is
treated as touching everything (`Accesses.all()`), so it runs alone.
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import TypeAlias

from deftly.contract.records import frozen


class Operation(StrEnum):
    """What a declared access does to its path: read, write, both, or search below it."""

    READ = "read"
    WRITE = "write"
    READWRITE = "readwrite"
    SEARCH = "search"

    @property
    def writes(self) -> bool:
        """Whether the operation changes the path (write or read-write), so it conflicts with any
        other access to it."""
        return self in (Operation.WRITE, Operation.READWRITE)


def path_key(path: str | os.PathLike[str]) -> str:
    """The form in which two paths are compared for overlap.

    Case-folded on every OS (two spellings of one file on a case-insensitive disk must
    serialise; on a case-sensitive disk the cost is only a little lost concurrency).
    """
    text = os.fspath(path).replace("\\", "/")
    while "//" in text:
        text = text.replace("//", "/")
    if len(text) > 1 and text.endswith("/"):
        text = text[:-1]
    return text.lower()


class WriteHow(StrEnum):
    """How a declared write changes its file, for the permission engine.

    Declared only by a tool that writes exactly the file it names; the engine then knows
    what the write can destroy. A write without it is one the engine knows nothing about.
    """

    REPLACE = "replace"
    """Creates the file or replaces all of it by a rename: other hard links keep the old
    content."""
    IN_PLACE = "in-place"
    """Changes the file where it is (append, truncate): every hard link to it changes."""


@frozen
class FileAccess:
    """One path, read/written/searched; `recursive` covers everything below it too."""

    operation: Operation
    path: str
    recursive: bool = False
    how: WriteHow | None = None
    """For a write: how it changes the file, when the tool writes exactly this file."""

    @property
    def key(self) -> str:
        """The path in the form overlaps are decided on (see `path_key`)."""
        return path_key(self.path)

    def overlaps(self, other: FileAccess) -> bool:
        """Whether the two accesses reach a common path: the same one, or one below the other's
        recursive access."""
        mine, theirs = self.key, other.key
        if mine == theirs:
            return True
        if self.recursive and _is_under(theirs, mine):
            return True
        return other.recursive and _is_under(mine, theirs)


@frozen
class AllAccess:
    """Touches everything: conflicts with every call that declares any access."""


Access: TypeAlias = FileAccess | AllAccess


def _is_under(child: str, parent: str) -> bool:
    prefix = parent if parent.endswith("/") else parent + "/"
    return child.startswith(prefix)


def accesses_conflict(left: Access, right: Access) -> bool:
    """Whether two accesses may not run at the same time: either touches everything, or at least one
    writes a path the other reaches."""
    if isinstance(left, AllAccess) or isinstance(right, AllAccess):
        return True
    if not (left.operation.writes or right.operation.writes):
        return False
    return left.overlaps(right)


@frozen
class Accesses:
    """The set of accesses one call declares."""

    items: tuple[Access, ...] = ()

    @classmethod
    def none(cls) -> Accesses:
        """Declares touching nothing: the call runs beside any other."""
        return _NONE

    @classmethod
    def all(cls) -> Accesses:
        """Declares touching everything: the call runs alone, as one with `accesses=None` does."""
        return _ALL

    @classmethod
    def file(
        cls,
        operation: Operation,
        path: str | os.PathLike[str],
        *,
        recursive: bool = False,
        how: WriteHow | None = None,
    ) -> Accesses:
        """One access to one path; `recursive` covers everything below it, `how` says how a write
        changes the file."""
        return cls((FileAccess(operation, os.fspath(path), recursive, how),))

    @classmethod
    def read_file(cls, path: str | os.PathLike[str]) -> Accesses:
        """Reads one file."""
        return cls.file(Operation.READ, path)

    @classmethod
    def read_tree(cls, path: str | os.PathLike[str]) -> Accesses:
        """Reads a directory and everything below it."""
        return cls.file(Operation.READ, path, recursive=True)

    @classmethod
    def write_file(cls, path: str | os.PathLike[str], how: WriteHow | None = None) -> Accesses:
        """Writes one file; give `how` when the tool writes exactly that file, so the permission
        engine knows what the write can destroy."""
        return cls.file(Operation.WRITE, path, how=how)

    @classmethod
    def write_tree(cls, path: str | os.PathLike[str]) -> Accesses:
        """Writes anywhere in a directory and below it."""
        return cls.file(Operation.WRITE, path, recursive=True)

    @classmethod
    def read_write_file(cls, path: str | os.PathLike[str], how: WriteHow | None = None) -> Accesses:
        """Reads one file and changes it (an edit); `how` as for `write_file`."""
        return cls.file(Operation.READWRITE, path, how=how)

    @classmethod
    def search_tree(cls, path: str | os.PathLike[str]) -> Accesses:
        """Searches a directory and everything below it (conflicts only with writes there)."""
        return cls.file(Operation.SEARCH, path, recursive=True)

    def __add__(self, other: Accesses) -> Accesses:
        return Accesses(self.items + other.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def is_exclusive(self) -> bool:
        """Whether the call touches everything and must run alone."""
        return any(isinstance(item, AllAccess) for item in self.items)

    @property
    def files(self) -> tuple[FileAccess, ...]:
        """The file accesses, without the touch-everything marker."""
        return tuple(item for item in self.items if isinstance(item, FileAccess))

    @property
    def written_paths(self) -> tuple[str, ...]:
        """The paths the call writes (what the permission engine checks writes against)."""
        return tuple(item.path for item in self.files if item.operation.writes)

    @property
    def writes(self) -> tuple[FileAccess, ...]:
        """The file accesses that write."""
        return tuple(item for item in self.files if item.operation.writes)

    def conflicts_with(self, other: Accesses) -> bool:
        """Whether a call with these accesses must wait for (or go before) a call with `other`,
        never run beside it."""
        return any(accesses_conflict(a, b) for a in self.items for b in other.items)


_NONE = Accesses(())
_ALL = Accesses((AllAccess(),))
