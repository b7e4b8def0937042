"""The execution environment: where a tool's file I/O and processes really happen.

Tools never call `open` or spawn processes themselves; they ask their `ExecEnv`. Its
interface speaks only neutral types (`deftly.contract.fs`: `FileStat`, `DirEntryInfo`,
`Process`), so an environment need not be this machine: the local one, a rooted one that
shows a virtual root, a remote one (SSH) all implement the same surface, in their own view
of paths. File methods are synchronous (tools run heavy ones in a worker thread); process
spawning is async. Following the processes a command starts is an optional capability
(`process_tree`, see `deftly.env.tree`).
"""

from __future__ import annotations

import io
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from deftly.contract.fs import DirEntryInfo, FileStat, PathProbe, Process
from deftly.env.tree import ProcessTree

Capability = str
FS: Capability = "fs"
PROCESS: Capability = "process"
PROCESS_TREE: Capability = "process_tree"
"""The environment offers a `ProcessTree` (`ExecEnv.process_tree` is not None)."""
NETWORK: Capability = "network"
"""The machine deftly runs on may reach the network (the web tools need it; an offline
environment leaves it out and they are absent)."""


class PathChanged(OSError):
    """A path the policy checked now leads elsewhere: a directory on its way (or the file
    itself) was replaced by a symbolic link or moved between the check and the use."""

    def __init__(self, path: Path, now: str | None = None) -> None:
        super().__init__(f"{path} no longer leads to the file that was checked")
        self.path = path
        self.now = now


class ExecEnv(ABC):
    """Everything a tool may do to the machine."""

    name: str = "env"
    capabilities: frozenset[Capability] = frozenset()

    # -- identity ------------------------------------------------------------------------

    @abstractmethod
    def home(self) -> Path:
        """The user's home directory, in this environment's view."""

    @abstractmethod
    def environ(self) -> Mapping[str, str]:
        """The environment variables commands start from."""

    @abstractmethod
    def path_probe(self) -> PathProbe:
        """What the path policy uses to resolve paths and look at files here (lstat,
        readlink, headers, `git status`), in this environment's view of paths."""

    def session_area(self, local_dir: Path) -> Path:
        """Where a session directory of this machine (spill files, task logs) appears in
        this environment's view, so a path the model is given can be read back through
        the environment (identity where the environment is this machine)."""
        return local_dir

    def program_dirs(self) -> list[str]:
        """Directories searched before PATH for deftly's own programs (`rg`)."""
        return []

    @property
    def process_tree(self) -> ProcessTree | None:
        """The process-tree capability, or None where the environment has none."""
        return None

    # -- files ---------------------------------------------------------------------------

    @abstractmethod
    def stat(self, path: Path) -> FileStat:
        """The status of what `path` leads to (links followed); OSError if missing."""

    def lstat(self, path: Path) -> FileStat:
        """The status of `path` itself (a link is not followed); OSError if missing."""
        return self.path_probe().lstat(os.fspath(path))

    @abstractmethod
    def open_read(self, path: Path, *, pinned: bool = False) -> io.BufferedIOBase:
        """A seekable binary handle: tools read windows of big files with seek + read.

        `pinned`: `path` is a real path (no symbolic links) that the path policy checked;
        raise PathChanged rather than open what it leads to now, if that is elsewhere.
        """

    @abstractmethod
    def stat_handle(self, handle: io.BufferedIOBase) -> FileStat:
        """The stat of an open handle (to notice a file that changes while it is read)."""

    @abstractmethod
    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """Replace `path` with `data` all at once: the old file or the new one, never half.

        `mode=None` keeps the permission bits (and, where allowed, the owner) of the file
        being replaced; a new file gets the usual bits for this process (0o666 & ~umask).
        `pinned` as for `open_read` (checked on the directory the file is written in).
        """

    def keep_scratch_journal(self, directory: Path) -> list[Path]:
        """Note in `directory` where this process's atomic writes happen, and remove the
        scratch files that writers no longer running left (a write killed half-way);
        returns those removed. An environment without scratch files does nothing."""
        return []

    @abstractmethod
    def append(self, path: Path, data: bytes, *, pinned: bool = False) -> None:
        """Add `data` at the end of `path` (created if missing). If the write fails, the
        file is cut back to its old length, so a failed append leaves it as it was.
        `pinned` as for `open_read`."""

    @abstractmethod
    def make_dirs(self, path: Path, *, pinned: bool = False, private: bool = False) -> None:
        """Create `path` and its missing parents (an existing directory is fine); when
        `private`, a `path` made here is readable by this user only (0700).

        `pinned` as for `open_read`: each missing directory is made inside the one above
        it through an open handle, starting from the deepest existing one, so a directory
        swapped for a link meanwhile raises PathChanged and nothing is created where the
        link leads."""

    @abstractmethod
    def scandir(self, path: Path) -> Iterator[DirEntryInfo]:
        """The entries of a directory, in no particular order."""

    @abstractmethod
    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
        """A new private scratch file holding `data` (the caller removes it)."""

    @abstractmethod
    def remove(self, path: Path) -> None:
        """Delete a file (a missing file is not an error)."""

    def read_bytes(self, path: Path) -> bytes:
        """The whole content of a file."""
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
        """Whether `path` leads to something (a dangling link does not)."""
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
        stream_limit: int | None = None,
    ) -> Process:
        """Start a process with stdin closed, stdout piped (stderr merged into it unless
        `merge_stderr` is false), in its own session so the whole group can be stopped.
        `stream_limit` sizes the pipe buffer (bigger reads for processes that print a lot)."""

    def release(self, process: Process) -> None:
        """Close this side of a finished process's pipes, even if a process it left behind
        still holds the other end. By default for the processes asyncio makes (an env that
        spawns through `asyncio.create_subprocess_exec`, or wraps one that does): their
        pipes live in the process's transport; other processes need nothing here."""
        transport: Any = getattr(process, "_transport", None)
        if transport is not None and process.returncode is not None:
            transport.close()

    @abstractmethod
    def which(self, program: str, search_path: str | None = None) -> str | None:
        """The full path of an executable, searched in `search_path` (os.pathsep-separated
        directories) or, when None, in the environment's PATH."""

    def open_append(self, path: Path) -> BinaryIO:
        """A file opened for appending, created (mode 0600) if missing: for streamed logs."""
        raise NotImplementedError(f"the {self.name} environment cannot stream to files")
