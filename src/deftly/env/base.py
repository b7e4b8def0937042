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
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

Capability = str
FS: Capability = "fs"
PROCESS: Capability = "process"


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
    def home(self) -> Path: ...

    @abstractmethod
    def environ(self) -> Mapping[str, str]: ...

    # -- files ---------------------------------------------------------------------------

    @abstractmethod
    def stat(self, path: Path) -> os.stat_result: ...

    @abstractmethod
    def open_read(self, path: Path, *, pinned: bool = False) -> io.BufferedIOBase:
        """A seekable binary handle: tools read windows of big files with seek + read.

        `pinned`: `path` is a real path (no symbolic links) that the path policy checked;
        raise PathChanged rather than open what it leads to now, if that is elsewhere.
        """

    @abstractmethod
    def stat_handle(self, handle: io.BufferedIOBase) -> os.stat_result:
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
    def make_dirs(self, path: Path, *, pinned: bool = False) -> None:
        """Create `path` and its missing parents (an existing directory is fine).

        `pinned` as for `open_read`: each missing directory is made inside the one above
        it through an open handle, starting from the deepest existing one, so a directory
        swapped for a link meanwhile raises PathChanged and nothing is created where the
        link leads."""

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
        stream_limit: int | None = None,
    ) -> asyncio.subprocess.Process:
        """Start a process with stdin closed, stdout piped (stderr merged into it unless
        `merge_stderr` is false), in its own session so the whole group can be stopped.
        `stream_limit` sizes the pipe buffer (bigger reads for processes that print a lot)."""

    @abstractmethod
    def which(self, program: str, search_path: str | None = None) -> str | None:
        """The full path of an executable, searched in `search_path` (os.pathsep-separated
        directories) or, when None, in the environment's PATH."""

    # -- process trees (commands that start more processes) ------------------------------
    #
    # Not abstract: an environment without them cannot run the shell tools, and says so.

    def open_append(self, path: Path) -> BinaryIO:
        """A file opened for appending, created (mode 0600) if missing: for streamed logs."""
        raise NotImplementedError(f"the {self.name} environment cannot stream to files")

    def session_processes(self, session_id: int) -> list[int]:
        """The living processes of a session (or process group) started by `spawn`,
        including those that moved to another process group inside it."""
        raise NotImplementedError(f"the {self.name} environment cannot list processes")

    async def wait_exit(self, process: asyncio.subprocess.Process) -> int:
        """The exit status, as soon as the process exits, even while a process it left
        behind still holds its output pipe (`Process.wait` waits for the pipes too)."""
        raise NotImplementedError(f"the {self.name} environment cannot watch processes")

    def group_alive(self, group_id: int) -> bool:
        """Whether any process is left in a process group (a cheap check)."""
        raise NotImplementedError(f"the {self.name} environment cannot check processes")

    def process_mark(self) -> int:
        """A point in time on the clock process start times use (0: not available)."""
        raise NotImplementedError(f"the {self.name} environment cannot time processes")

    def stray_processes(self, sessions: Mapping[int, int]) -> dict[int, list[int]]:
        """For sessions whose first process has ended (session id -> `process_mark()` at
        that moment): the processes still running in each, counted only when at least one
        of them started before that mark (a later session with a reused id is not ours)."""
        raise NotImplementedError(f"the {self.name} environment cannot list processes")

    def adopt_orphans(self) -> bool:
        """Have orphaned descendants (a `setsid` child whose parent exited) come back to
        this process instead of init, so `marked_children` finds them. Whether it works."""
        return False

    def marked_children(self, variable: str) -> dict[int, str]:
        """Living children of this process whose environment sets `variable` (pid ->
        its value): with `adopt_orphans`, the orphans a command left behind."""
        raise NotImplementedError(f"the {self.name} environment cannot list processes")

    def signal_process(self, pid: int, signal_number: int) -> bool:
        """Signal one process found by `marked_children` (and, when it leads one, its
        session); whether it was still there."""
        raise NotImplementedError(f"the {self.name} environment cannot signal processes")

    def reap_adopted(self) -> int:
        """Collect the exit status of adopted children that ended (found earlier by
        `marked_children`), so they do not stay zombies. Returns how many."""
        return 0

    def signal_session(self, session_id: int, signal_number: int) -> int:
        """Send a signal to every process of a session started by `spawn`: its process
        group and any member that left the group. Returns how many were signalled."""
        raise NotImplementedError(f"the {self.name} environment cannot signal processes")

    def hand_off_output(
        self,
        process: asyncio.subprocess.Process,
        log_path: Path,
        limit: int | None,
        flush: Callable[[bytes], None],
    ) -> None:
        """Stop reading a running process's output and let it go on into `log_path`
        (at most `limit` more bytes, the rest discarded) without this process: the
        output it already sent is given to `flush` first. Used to keep a command alive
        beyond the runtime; its stdout must not break when the runtime goes away."""
        raise NotImplementedError(f"the {self.name} environment cannot hand off output")

    def release(self, process: asyncio.subprocess.Process) -> None:
        """Close this side of a finished process's pipes, even if a stray process that
        escaped its session still holds the other end."""
        raise NotImplementedError(f"the {self.name} environment cannot release processes")
