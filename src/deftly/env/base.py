"""The execution environment: where a tool's file I/O and processes really happen.

Tools never call `open` or spawn processes themselves; they ask their `ExecEnv`. The local
environment is the only one today; a remote one (SSH, a container) implements the same
surface. File methods are synchronous (tools run heavy ones in a worker thread); process
spawning is async.
"""

from __future__ import annotations

import asyncio
import io
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

Capability = str
FS: Capability = "fs"
PROCESS: Capability = "process"


class ExecEnv(ABC):
    """Everything a tool may do to the machine."""

    name: str = "env"
    capabilities: frozenset[Capability] = frozenset()

    # -- identity ------------------------------------------------------------------------

    @abstractmethod
    def home(self) -> Path: ...

    @abstractmethod
    def environ(self) -> Mapping[str, str]: ...

    # -- files ---------------------------------------------------------------------------

    @abstractmethod
    def stat(self, path: Path) -> os.stat_result: ...

    @abstractmethod
    def open_read(self, path: Path) -> io.BufferedIOBase:
        """A seekable binary handle: tools read windows of big files with seek + read."""

    @abstractmethod
    def stat_handle(self, handle: io.BufferedIOBase) -> os.stat_result:
        """The stat of an open handle (to notice a file that changes while it is read)."""

    @abstractmethod
    def write_atomic(self, path: Path, data: bytes, *, mode: int | None = None) -> None:
        """Replace `path` with `data` all at once: the old file or the new one, never half.

        `mode=None` keeps the permission bits (and, where allowed, the owner) of the file
        being replaced; a new file gets the usual bits for this process (0o666 & ~umask).
        """

    @abstractmethod
    def append(self, path: Path, data: bytes) -> None:
        """Add `data` at the end of `path` (created if missing). If the write fails, the
        file is cut back to its old length, so a failed append leaves it as it was."""

    @abstractmethod
    def make_dirs(self, path: Path) -> None: ...

    @abstractmethod
    def scandir(self, path: Path) -> Iterator[os.DirEntry[str]]: ...

    @abstractmethod
    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
        """A new private scratch file holding `data` (the caller removes it)."""

    @abstractmethod
    def remove(self, path: Path) -> None:
        """Delete a file (a missing file is not an error)."""

    def read_bytes(self, path: Path) -> bytes:
        with self.open_read(path) as handle:
            return handle.read()

    def mtimes(self, paths: Sequence[str | bytes]) -> list[float]:
        """Modification times of many files at once (0.0 for one that cannot be read).

        One call for a whole result list, so a remote environment makes one round trip.
        """
        out: list[float] = []
        for path in paths:
            try:
                out.append(self.stat(Path(os.fsdecode(path))).st_mtime)
            except OSError:
                out.append(0.0)
        return out

    def exists(self, path: Path) -> bool:
        try:
            self.stat(path)
        except OSError:
            return False
        return True

    # -- processes -----------------------------------------------------------------------

    @abstractmethod
    async def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        merge_stderr: bool = True,
        new_session: bool = True,
    ) -> asyncio.subprocess.Process:
        """Start a process with stdin closed, stdout piped (stderr merged into it unless
        `merge_stderr` is false), in its own session so the whole group can be stopped."""

    @abstractmethod
    def which(self, program: str, search_path: str | None = None) -> str | None:
        """The full path of an executable, searched in `search_path` (os.pathsep-separated
        directories) or, when None, in the environment's PATH."""
