"""The neutral file and process types an execution environment speaks.

Nothing here is tied to the local machine: a `FileStat` is plain data (it can come over an
SSH channel), a `Process` is whatever the environment started, seen through the few things
the tools use of it. `PathProbe` is what the path policy may ask an environment (read-only
looks at names, links and file headers); `LocalProbe` is the local machine's, the default
wherever no environment is given.

`FileStat` keeps `os.stat_result`'s field names (`st_mode`, `st_size`, ...) so the code that
reads a stat reads the same whichever environment made it.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

from deftly.contract.records import frozen


class FileStat(NamedTuple):
    """The status of one file, as the tools use it (an `os.stat_result` without the rest).

    A named tuple: cheap to make (the sandbox's walk makes one per directory before every
    command) and plain data any environment can send."""

    st_mode: int
    st_size: int = 0
    st_mtime_ns: int = 0
    st_ino: int = 0
    st_dev: int = 0
    st_nlink: int = 1
    st_uid: int = 0
    st_gid: int = 0

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        """The neutral copy of a local `os.stat_result`."""
        return cls(
            st.st_mode,
            st.st_size,
            st.st_mtime_ns,
            st.st_ino,
            st.st_dev,
            st.st_nlink,
            st.st_uid,
            st.st_gid,
        )

    @property
    def st_mtime(self) -> float:
        """The modification time in seconds (as `os.stat_result.st_mtime`)."""
        return self.st_mtime_ns / 1e9

    def is_dir(self) -> bool:
        """Whether this is a directory."""
        return stat.S_ISDIR(self.st_mode)

    def is_file(self) -> bool:
        """Whether this is a regular file."""
        return stat.S_ISREG(self.st_mode)

    def is_symlink(self) -> bool:
        """Whether this is a symbolic link (only an `lstat` can say so)."""
        return stat.S_ISLNK(self.st_mode)


class EntryKind(StrEnum):
    """What a directory entry is, without following a link."""

    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"
    OTHER = "other"
    """A FIFO, socket or device, or an entry that vanished while it was looked at."""


class DirEntryInfo(NamedTuple):
    """One entry of a directory listing: its name, its full path and its kind."""

    name: str
    path: str
    kind: EntryKind
    stat: FileStat | None = None
    """Its `lstat`, when the environment had it for free (None: ask `lstat`)."""

    def is_dir(self) -> bool:
        """Whether the entry itself is a directory (a link to one is not)."""
        return self.kind is EntryKind.DIR

    def is_file(self) -> bool:
        """Whether the entry itself is a regular file (a link to one is not)."""
        return self.kind is EntryKind.FILE

    def is_symlink(self) -> bool:
        """Whether the entry is a symbolic link."""
        return self.kind is EntryKind.SYMLINK


class ByteStream(Protocol):
    """The reading end of a process's output pipe (what `asyncio.StreamReader` offers)."""

    async def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes (all until the end when -1); b"" at the end."""
        ...

    async def readline(self) -> bytes:
        """One line, its newline included; b"" at the end."""
        ...

    def at_eof(self) -> bool:
        """Whether the end was reached and nothing is buffered."""
        ...


class Process(Protocol):
    """A process an environment started, as the shell and search code use it."""

    @property
    def pid(self) -> int:
        """Its process id in the environment (also its session and group id when it was
        started in a new session)."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status once it exited (negative: the signal that ended it), else None."""
        ...

    @property
    def stdout(self) -> ByteStream | None:
        """Its output (stderr merged in unless asked otherwise)."""
        ...

    @property
    def stderr(self) -> ByteStream | None:
        """Its error output, when it is not merged into `stdout`."""
        ...

    async def wait(self) -> int:
        """Wait until it exited and its pipes closed; the exit status."""
        ...

    def send_signal(self, signal_number: int) -> None:
        """Send it a signal."""
        ...

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM)."""
        ...

    def kill(self) -> None:
        """Stop it at once (SIGKILL)."""
        ...


class FileWriter(Protocol):
    """Writing whole files where an environment keeps them (what `ExecEnv` offers): used
    by layers below the env, such as the spill of long outputs."""

    def make_dirs(self, path: Path, *, pinned: bool = False, private: bool = False) -> None:
        """Create `path` and its missing parents (an existing directory is fine); a new
        `path` is private to this user (0700) when `private` is set."""
        ...

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """Replace `path` with `data` all at once."""
        ...


@frozen
class CommandOutput:
    """What a short command run to completion printed, and how it ended."""

    returncode: int
    stdout: bytes
    stderr: bytes


@runtime_checkable
class PathProbe(Protocol):
    """Read-only looks the path policy takes at an environment: whether a name exists,
    whether it is a link and where it points, the first bytes of a file, and one short
    read-only command (`git status`). Paths are absolute, in the environment's own view."""

    def lstat(self, path: str) -> FileStat:
        """The status of `path` itself (a link is not followed); OSError if missing."""
        ...

    def stat(self, path: str) -> FileStat:
        """The status of what `path` leads to (links followed); OSError if missing."""
        ...

    def link_target(self, path: str) -> str | None:
        """Where the link `path` points (its text, as `readlink`), or None when `path`
        exists and is not a link. FileNotFoundError / NotADirectoryError when it does not
        exist: the one step path resolution takes per component."""
        ...

    def readlink(self, path: str) -> str:
        """The text of the symbolic link `path`; OSError if it is not one."""
        ...

    def lexists(self, path: str) -> bool:
        """Whether `path` exists (a dangling link exists)."""
        ...

    def read_header(self, path: str, size: int) -> bytes | None:
        """The first `size` bytes of a regular file; None for anything else or on error.
        Never blocks on a FIFO or reads a device."""
        ...

    def run_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float,
    ) -> CommandOutput:
        """Run a short read-only command to completion (stdin closed, output captured);
        OSError if it cannot be started, TimeoutError if it outlives `timeout`. `env` is
        added to the environment's own variables."""
        ...


class LocalProbe:
    """The local machine's `PathProbe`: `os` calls on local paths."""

    __slots__ = ()

    def lstat(self, path: str) -> FileStat:
        """See `PathProbe.lstat`."""
        return FileStat.of(os.lstat(path))

    def stat(self, path: str) -> FileStat:
        """See `PathProbe.stat`."""
        return FileStat.of(os.stat(path))

    def link_target(self, path: str) -> str | None:
        """See `PathProbe.link_target`."""
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        return os.readlink(path)

    def readlink(self, path: str) -> str:
        """See `PathProbe.readlink`."""
        return os.readlink(path)

    def lexists(self, path: str) -> bool:
        """See `PathProbe.lexists`."""
        return os.path.lexists(path)

    def read_header(self, path: str, size: int) -> bytes | None:
        """See `PathProbe.read_header`."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return os.read(fd, size)
        except OSError:
            return None
        finally:
            os.close(fd)

    def run_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float,
    ) -> CommandOutput:
        """See `PathProbe.run_command`."""
        variables = {**os.environ, **env} if env else None
        return run_captured(argv, cwd=cwd, env=variables, timeout=timeout)


def run_captured(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None, timeout: float
) -> CommandOutput:
    """Run a short read-only command on this machine (stdin closed, output captured):
    the one way a probe runs `git status`. A timeout is TimeoutError, other failures to
    run it OSError."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(f"{argv[0]} did not finish within {timeout:g} s") from exc
    except subprocess.SubprocessError as exc:
        raise OSError(str(exc)) from exc
    return CommandOutput(done.returncode, done.stdout, done.stderr)


LOCAL_PROBE: PathProbe = LocalProbe()
"""The one local probe (it holds no state)."""


MAX_SYMLINKS = 40
"""How many links one resolution follows before it gives up (the kernel's limit)."""


class LinkLoopError(OSError):
    """More than `MAX_SYMLINKS` links on the way: a loop, or a chain too long to follow."""


def follow_links(
    text: str,
    link_target: Callable[[str], str | None],
    lexists: Callable[[str], bool],
    *,
    follow_last: bool = True,
) -> str:
    """Resolve the absolute path `text` component by component, the way the kernel does.

    `link_target(path)` is one step (see `PathProbe.link_target`: a link's text, None for
    an existing non-link, FileNotFoundError / NotADirectoryError for a missing one). `..`
    after a link goes to the parent of the link's *target*; components that do not exist
    are kept as written (a new file resolves through its deepest existing ancestor); with
    `follow_last` false a link in the last place is kept (for lstat, readlink, unlink).
    One algorithm for every view of paths: the local machine's and a rooted env's.
    """
    pending = [part for part in reversed(text.split("/")) if part]
    current = ""  # the root
    hops = 0
    missing = False
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            current = current.rpartition("/")[0]
            if missing:
                # Back above a missing component: what is left may exist again (and may be
                # a link further on), so keep resolving for real.
                missing = not lexists(current or "/")
            continue
        candidate = f"{current}/{part}"
        if missing or (not pending and not follow_last):
            current = candidate
            continue
        try:
            target = link_target(candidate)
        except (FileNotFoundError, NotADirectoryError):
            missing = True
            current = candidate
            continue
        if target is None:
            current = candidate
            continue
        hops += 1
        if hops > MAX_SYMLINKS:
            raise LinkLoopError(errno.ELOOP, "too many levels of symbolic links", text)
        if target.startswith("/"):
            current = ""
        pending.extend(part for part in reversed(target.split("/")) if part)
    return current or "/"
