"""Where a runtime keeps its files: the user data directory and one directory per session."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import platformdirs


def data_home() -> Path:
    """`$DEFTLY_HOME`, else the platform's user data directory (~/.local/share/deftly)."""
    override = os.environ.get("DEFTLY_HOME")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("deftly"))


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def session_dir(workspace: Path, session_id: str, home: Path | None = None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", workspace.name).strip("_") or "root"
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:8]
    return (home or data_home()) / "sessions" / f"{slug}-{digest}" / session_id


IN_USE = ".in-use"
"""A file in each live session directory, locked (flock) by the runtime that owns it."""


class SessionClaim:
    """A runtime's hold on its session directory while it runs: the directory exists and
    its `.in-use` file is locked, so pruning by other runtimes leaves it alone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def claim(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Unlock; a session that kept nothing (no spills, logs or plans) is removed."""
        if self._fd is None:
            return
        os.close(self._fd)
        self._fd = None
        with contextlib.suppress(OSError):
            if [entry.name for entry in os.scandir(self.path)] == [IN_USE]:
                os.unlink(self.path / IN_USE)
                self.path.rmdir()


def prune_sessions(sessions: Path, *, older_than_days: float, keep: Path) -> list[Path]:
    """Remove the session directories under `sessions` (one workspace's) that no runtime
    holds and nothing in has changed for `older_than_days`; `keep` is never touched.
    Returns what was removed."""
    cutoff = time.time() - older_than_days * 86_400
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(sessions) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if path == keep or _newest_change(path) >= cutoff:
            continue
        with _unless_in_use(path) as free:
            if free:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def _newest_change(path: Path) -> float:
    newest = 0.0
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files, "."):
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
    return newest


@contextlib.contextmanager
def _unless_in_use(path: Path) -> Iterator[bool]:
    """True (holding its lock meanwhile) when no runtime holds the session at `path`."""
    try:
        fd = os.open(path / IN_USE, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        yield True
        return
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)
