"""The local machine as an execution environment."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from deftly.env.base import FS, PROCESS, ExecEnv


class LocalEnv(ExecEnv):
    name = "local"
    capabilities = frozenset({FS, PROCESS})

    def home(self) -> Path:
        return Path.home()

    def environ(self) -> Mapping[str, str]:
        return os.environ

    def stat(self, path: Path) -> os.stat_result:
        return os.stat(path)

    def open_read(self, path: Path) -> io.BufferedIOBase:
        return open(path, "rb")

    def stat_handle(self, handle: io.BufferedIOBase) -> os.stat_result:
        return os.fstat(handle.fileno())

    def mtimes(self, paths: Sequence[str | bytes]) -> list[float]:
        out: list[float] = []
        append = out.append
        for path in paths:
            try:
                append(os.stat(path).st_mtime)
            except OSError:
                append(0.0)
        return out

    def write_atomic(self, path: Path, data: bytes, *, mode: int | None = None) -> None:
        directory = path.parent
        try:
            existing: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            existing = None
        if mode is None:
            mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".deftly-tmp", dir=directory
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                if existing is not None:
                    _keep_owner(handle.fileno(), existing)
                os.fchmod(handle.fileno(), mode)
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        _fsync_directory(directory)

    def append(self, path: Path, data: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
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

    def make_dirs(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    def scandir(self, path: Path) -> Iterator[os.DirEntry[str]]:
        with os.scandir(path) as entries:
            yield from entries

    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
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
    ) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=new_session,
        )

    def which(self, program: str, search_path: str | None = None) -> str | None:
        return shutil.which(program, path=search_path)


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


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (where the platform allows opening a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
