"""The local machine as an execution environment."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

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

    def open_read(self, path: Path) -> BinaryIO:
        return open(path, "rb")

    def write_atomic(self, path: Path, data: bytes, *, mode: int | None = None) -> None:
        directory = path.parent
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".deftly-tmp", dir=directory
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp_name, mode)
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        _fsync_directory(directory)

    def append(self, path: Path, data: bytes) -> None:
        with open(path, "ab") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    def make_dirs(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    def scandir(self, path: Path) -> Iterator[os.DirEntry[str]]:
        with os.scandir(path) as entries:
            yield from entries

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

    def which(self, program: str) -> str | None:
        return shutil.which(program)


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
