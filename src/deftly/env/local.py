"""The local machine as an execution environment."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import os
import shutil
import stat
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from deftly.contract.fs import LOCAL_PROBE, DirEntryInfo, EntryKind, FileStat, PathProbe, Process
from deftly.env.base import FS, NETWORK, PROCESS, PROCESS_TREE, ExecEnv, PathChanged
from deftly.env.local_tree import LocalProcessTree
from deftly.env.scratch import ScratchJournal, scratch_name
from deftly.env.tree import ProcessTree


class LocalEnv(ExecEnv):
    """This machine, its files and processes, seen as they are (paths are local paths)."""

    name = "local"
    capabilities = frozenset({FS, PROCESS, PROCESS_TREE, NETWORK})

    def __init__(self) -> None:
        self._journal: ScratchJournal | None = None
        self._tree = LocalProcessTree()

    def keep_scratch_journal(self, directory: Path) -> list[Path]:
        """See `ExecEnv.keep_scratch_journal`."""
        self._journal = ScratchJournal(directory)
        return self._journal.remove_stale()

    def home(self) -> Path:
        """See `ExecEnv.home`."""
        return Path.home()

    def environ(self) -> Mapping[str, str]:
        """See `ExecEnv.environ`."""
        return os.environ

    def path_probe(self) -> PathProbe:
        """See `ExecEnv.path_probe`: plain `os` calls."""
        return LOCAL_PROBE

    def program_dirs(self) -> list[str]:
        """See `ExecEnv.program_dirs`: the running interpreter's scripts directories."""
        return scripts_dirs()

    @property
    def process_tree(self) -> ProcessTree:
        """See `ExecEnv.process_tree`: `/proc` and signals (`LocalProcessTree`)."""
        return self._tree

    def stat(self, path: Path) -> FileStat:
        """See `ExecEnv.stat`."""
        return FileStat.of(os.stat(path))

    def lstat(self, path: Path) -> FileStat:
        """See `ExecEnv.lstat`."""
        return FileStat.of(os.lstat(path))

    def open_read(self, path: Path, *, pinned: bool = False) -> io.BufferedIOBase:
        """See `ExecEnv.open_read`."""
        if not pinned:
            return open(path, "rb")
        return _reader(_open_pinned(path, os.O_RDONLY))

    def stat_handle(self, handle: io.BufferedIOBase) -> FileStat:
        """See `ExecEnv.stat_handle`."""
        return FileStat.of(os.fstat(handle.fileno()))

    def mtimes(self, paths: Sequence[str | bytes]) -> list[float]:
        """See `ExecEnv.mtimes`."""
        out: list[float] = []
        append = out.append
        for path in paths:
            try:
                append(os.stat(path).st_mtime)
            except OSError:
                append(0.0)
        return out

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """See `ExecEnv.write_atomic`."""
        # Everything happens relative to one open handle on the directory, so the
        # scratch file, the rename and the fsync all land in the same place.
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        directory = _open_pinned(path.parent, flags) if pinned else os.open(path.parent, flags)
        if self._journal is not None:
            self._journal.note(path.parent)
        try:
            _replace_in(directory, path, data, mode, pinned=pinned)
        finally:
            os.close(directory)

    def append(self, path: Path, data: bytes, *, pinned: bool = False) -> None:
        """See `ExecEnv.append`."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = _open_pinned(path, flags) if pinned else os.open(path, flags, 0o666)
        try:
            size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)

    def make_dirs(self, path: Path, *, pinned: bool = False, private: bool = False) -> None:
        """See `ExecEnv.make_dirs`."""
        if not pinned:
            path.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)
            return
        existing, missing = _deepest_existing(path)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        directory = _open_pinned(existing, flags)
        try:
            for index, name in enumerate(missing):
                last = index == len(missing) - 1
                with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                    os.mkdir(name, 0o700 if private and last else 0o777, dir_fd=directory)
                inner = _open_below(directory, name, existing / name)
                os.close(directory)
                directory, existing = inner, existing / name
        finally:
            os.close(directory)

    def scandir(self, path: Path) -> Iterator[DirEntryInfo]:
        """See `ExecEnv.scandir`."""
        with os.scandir(path) as entries:
            for entry in entries:
                yield DirEntryInfo(entry.name, entry.path, _kind(entry))

    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
        """See `ExecEnv.write_temp`."""
        fd, name = tempfile.mkstemp(prefix="deftly-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        return Path(name)

    def remove(self, path: Path) -> None:
        """See `ExecEnv.remove`."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

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
        """See `ExecEnv.spawn`."""
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=new_session,
            limit=stream_limit or _DEFAULT_STREAM_LIMIT,
        )

    def which(self, program: str, search_path: str | None = None) -> str | None:
        """See `ExecEnv.which`."""
        return shutil.which(program, path=search_path)

    def open_append(self, path: Path) -> BinaryIO:
        """See `ExecEnv.open_append`."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        return os.fdopen(fd, "ab")


def scripts_dirs() -> list[str]:
    """Where the running interpreter's console scripts live (the venv's bin/ first)."""
    found: list[str] = []
    for candidate in (
        sysconfig.get_path("scripts"),
        os.path.dirname(sys.executable),
        sysconfig.get_path("scripts", f"{os.name}_user"),
    ):
        if candidate and candidate not in found:
            found.append(candidate)
    return found


def _kind(entry: os.DirEntry[str]) -> EntryKind:
    """What an entry is, without following a link (OTHER when it vanished)."""
    try:
        if entry.is_file(follow_symlinks=False):
            return EntryKind.FILE
        if entry.is_dir(follow_symlinks=False):
            return EntryKind.DIR
        if entry.is_symlink():
            return EntryKind.SYMLINK
    except OSError:
        pass
    return EntryKind.OTHER


_umask_lock = threading.Lock()


def _umask() -> int:
    """The process umask, read without changing it where the OS says it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        current = os.umask(0o022)
        os.umask(current)
    return current


def _keep_owner(fd: int, existing: os.stat_result) -> None:
    """Give the new file the old one's owner and group, when we are allowed to."""
    if existing.st_uid == os.geteuid() and existing.st_gid == os.getegid():
        return
    with contextlib.suppress(OSError, AttributeError):
        os.fchown(fd, existing.st_uid, existing.st_gid)


_DEFAULT_STREAM_LIMIT = 2**16


def _reader(fd: int) -> io.BufferedReader:
    """A buffered reader that owns `fd`: what `os.fdopen(fd, "rb")` makes, without its
    terminal check (an ioctl on every open: a file opened to read is never a terminal's
    line-buffered stream)."""
    try:
        raw = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)  # not owned yet (once it is, closing `raw` closes it)
        raise
    return io.BufferedReader(raw)


def _open_pinned(path: Path, flags: int, mode: int = 0o666) -> int:
    """Open a real path the policy checked, refusing with PathChanged if it now leads
    elsewhere: the last component may not be a link (O_NOFOLLOW), and the kernel's own
    name for what was opened must be the checked path (a directory on the way may have
    been swapped for a link)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.ENOTDIR and flags & os.O_DIRECTORY and os.path.islink(path)
        ):
            raise PathChanged(path, "a symbolic link") from None
        raise
    try:
        now = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fd  # no /proc here: O_NOFOLLOW is all the check there is
    if now != os.fspath(path):
        os.close(fd)
        raise PathChanged(path, now)
    return fd


def _deepest_existing(path: Path) -> tuple[Path, list[str]]:
    """The deepest ancestor of `path` (itself included) that exists, and the names of the
    directories missing below it, top first."""
    missing: list[str] = []
    current = path
    while True:
        try:
            os.lstat(current)
            return current, missing[::-1]
        except OSError:
            if current.parent == current:
                raise
            missing.append(current.name)
            current = current.parent


def _open_below(directory: int, name: str, path: Path) -> int:
    """Open the directory `name` inside the open `directory`, never through a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.ENOTDIR
            and stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
        ):
            raise PathChanged(path, "a symbolic link") from None
        raise


def _replace_in(directory: int, path: Path, data: bytes, mode: int | None, *, pinned: bool) -> None:
    name = path.name
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        if pinned:
            raise PathChanged(path, "a symbolic link")
        existing = os.stat(path)  # an unchecked link: keep what it points at's mode
    if mode is None:
        mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
    scratch = _scratch_file(directory, name)
    try:
        with os.fdopen(scratch[0], "wb") as handle:
            if existing is not None:
                _keep_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch[1], name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch[1], dir_fd=directory)
        raise
    with contextlib.suppress(OSError):
        os.fsync(directory)  # the rename itself is durable


def _scratch_file(directory: int, name: str) -> tuple[int, str]:
    """A new private file beside `name` in `directory`, for an atomic replace, named for
    this process (see `scratch.py`) so a later runtime can tell a dead writer's."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        scratch = scratch_name(name)
        try:
            return os.open(scratch, flags, 0o600, dir_fd=directory), scratch
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a scratch file beside {name}")
