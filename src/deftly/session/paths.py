"""Where a runtime keeps its files: the user data directory and one directory per session."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import platformdirs


def data_home() -> Path:
    """`$DEFTLY_HOME`, else the platform's user data directory (~/.local/share/deftly)."""
    override = os.environ.get("DEFTLY_HOME")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("deftly"))


def new_session_id() -> str:
    """A fresh session id: the local time it started and six random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def session_dir(workspace: Path, session_id: str, home: Path | None = None) -> Path:
    """Where the session `session_id` of `workspace` keeps its files under the data home."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", workspace.name).strip("_") or "root"
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:8]
    return (home or data_home()) / "sessions" / f"{slug}-{digest}" / session_id


IN_USE = ".in-use"
"""A file in each live session directory, locked (flock) by everyone who holds the session:
a shared lock per holder; pruning and the last holder's clean-up take it exclusively."""

CLAIM_TIMEOUT = 5.0
"""How long a claim waits while a pruner or a releasing holder has the session locked."""

PRUNING_PREFIX = ".pruning-"
"""A session being removed is first renamed to this prefix, so a new claim never lands in it;
whatever lists sessions skips names starting with "." (the next pruning deletes leftovers)."""


class SessionClaim:
    """One holder's hold on a session directory: the directory exists and its `.in-use` file
    is share-locked, so pruning leaves it alone.

    Any number of holders (agents of one session in this process, a sub-agent or a resumed
    run in another) may claim the same directory at once; each `SessionClaim` is one holder.
    The directory is removed at `release()` only when it kept nothing and no one else holds
    it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this claim holds its directory now."""
        return self._fd is not None

    def claim(self, timeout: float = CLAIM_TIMEOUT) -> None:
        """Create the directory if needed and share-lock its `.in-use` file.

        Waits up to `timeout` seconds while the directory is locked exclusively (being
        pruned, or checked by a holder that is releasing it), then raises `OSError`. A claim
        that raced a removal starts again in a fresh directory. Claiming twice is a no-op.
        """
        if self._fd is not None:
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
                fd = os.open(
                    self.path / IN_USE,
                    os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                    0o600,
                )
            except (FileNotFoundError, FileExistsError):
                # Removed while we made or opened it (mkdir's exist_ok looks again after
                # EEXIST): make it again; but a file in the way is no race.
                if time.monotonic() > deadline or _not_a_directory(self.path):
                    raise
                continue
            try:
                _lock_shared(fd, deadline)
            except OSError:
                os.close(fd)
                raise
            if _is_current(fd, self.path / IN_USE):
                self._fd = fd
                return
            os.close(fd)  # we locked a file that was removed meanwhile
            if time.monotonic() > deadline:
                raise TimeoutError(f"the session directory {self.path} kept being removed")

    def release(self) -> None:
        """Drop this hold; the directory is removed when it kept nothing (no state, spills,
        logs or plans) and no one else holds it."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # someone else holds it: theirs to clean up
            with contextlib.suppress(OSError):
                if [entry.name for entry in os.scandir(self.path)] == [IN_USE]:
                    os.unlink(self.path / IN_USE)
                    self.path.rmdir()
        finally:
            os.close(fd)


def _lock_shared(fd: int, deadline: float) -> None:
    """Share-lock `fd`, waiting (until `deadline`) while someone holds it exclusively."""
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except BlockingIOError as exc:
            if time.monotonic() > deadline:
                raise BlockingIOError(
                    exc.errno,
                    "the session is locked exclusively by another process (a removal "
                    "in progress, or an older deftly holding it)",
                ) from exc
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _not_a_directory(path: Path) -> bool:
    """Whether something other than a directory stands at `path` (or above it)."""
    for place in (path, *path.parents):
        try:
            mode = os.lstat(place).st_mode  # one look: the place may vanish meanwhile
        except (FileNotFoundError, NotADirectoryError):
            continue
        return not stat.S_ISDIR(mode)
    return False


def _is_current(fd: int, path: Path) -> bool:
    """Whether `fd` is still the file at `path` (not one unlinked by a pruner).

    An unlinked file has no links left: checked too, because a new `.in-use` made at once
    may be given the inode number the removed one had, and would then look the same."""
    try:
        here = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return mine.st_nlink > 0 and (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)


def prune_sessions(sessions: Path, *, older_than_days: float, keep: Path) -> list[Path]:
    """Remove the session directories under `sessions` (one workspace's) that no one holds
    and nothing in has changed for `older_than_days`; `keep` is never touched.
    Returns what was removed.

    A session is removed while its `.in-use` file is locked exclusively (so no claim can
    start meanwhile), by renaming it out of the way first and then deleting the renamed
    tree: a claim racing the removal finds no directory and makes a fresh one.
    """
    cutoff = time.time() - older_than_days * 86_400
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(sessions) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(PRUNING_PREFIX):
            shutil.rmtree(path, ignore_errors=True)  # a removal cut short earlier
            continue
        if path == keep or _newest_change(path) >= cutoff:
            continue
        doomed = _take_away(path)
        if doomed is not None:
            shutil.rmtree(doomed, ignore_errors=True)
            removed.append(path)
    return removed


def _take_away(path: Path) -> Path | None:
    """Rename the session at `path` out of the way when no one holds it; its new name."""
    with _unless_in_use(path) as free:
        if not free:
            return None
        doomed = path.with_name(f"{PRUNING_PREFIX}{path.name}-{secrets.token_hex(4)}")
        try:
            os.rename(path, doomed)
        except OSError:
            return None
        return doomed


def _newest_change(path: Path) -> float:
    newest = 0.0
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files, "."):
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
    return newest


@contextlib.contextmanager
def _unless_in_use(path: Path) -> Iterator[bool]:
    """True (holding its lock exclusively meanwhile) when no one holds the session at `path`.

    A session without an `.in-use` file gets one first, so a claim starting meanwhile
    waits for this lock instead of slipping in unseen.
    """
    try:
        fd = os.open(path / IN_USE, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        try:
            fd = os.open(
                path / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
            )
        except OSError:
            yield False
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
    if not _is_current(fd, path / IN_USE):
        # The file was removed (a last holder cleaning up) after we opened it, and the
        # session may be claimed again meanwhile: our lock guards nothing. Leave it.
        os.close(fd)
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)
