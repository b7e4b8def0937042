"""Scratch files of atomic writes, and removing those a killed process left behind.

An atomic write puts the new content into a scratch file beside the target and renames it
over the target. A process killed between the two leaves the scratch file, up to the
file's full size. Its name says whose it is: `.<name>.<pid>-<start>-<random>.deftly-tmp`
(`start`: the process's start time in clock ticks since boot, so a reused pid is a
different writer). A scratch file whose writer is no longer running is garbage.

Finding them must not walk the workspace at every start. So each process that writes
notes, once per directory, the directories it writes in, in a journal of its own in the
data home (`scratch/<pid>-<start>`, one line per directory). At start, a runtime reads
the journals of writers that are gone, looks only in their directories (one `scandir`
each, no recursion), removes those writers' scratch files, then the journal.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
from pathlib import Path

SUFFIX = ".deftly-tmp"
_NAME = re.compile(r"^\..*\.(\d+)-(\d+)-[0-9a-f]{8}\.deftly-tmp$", re.DOTALL)
_JOURNAL = re.compile(r"^(\d+)-(\d+)$")
MAX_BASE = 180
"""Most characters of the target's name kept in a scratch name (names end at 255)."""


def start_ticks(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, from /proc), None if it is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        if fields[0] in (b"Z", b"X"):
            return None
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def writer() -> tuple[int, int]:
    """This process: (pid, start ticks); start 0 where /proc cannot say. (Keyed by pid:
    a forked child is a writer of its own.)"""
    pid = os.getpid()
    return pid, _own_start(pid)


@functools.lru_cache(maxsize=8)
def _own_start(pid: int) -> int:
    return start_ticks(pid) or 0


def scratch_name(name: str) -> str:
    """A fresh scratch-file name beside `name`, carrying this writer's pid and start time."""
    pid, start = writer()
    return f".{name[:MAX_BASE]}.{pid}-{start}-{secrets.token_hex(4)}{SUFFIX}"


def _alive(pid: int, start: int) -> bool:
    now = start_ticks(pid)
    return now is not None and start in (0, now)


class ScratchJournal:
    """Where this process's atomic writes happen, noted once per directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        pid, start = writer()
        self.path = directory / f"{pid}-{start}"
        self._noted: set[str] = set()

    def note(self, folder: Path) -> None:
        """Record `folder` before a scratch file is made in it (once per folder)."""
        key = os.fspath(folder)
        if key in self._noted or "\n" in key:
            return
        with contextlib.suppress(OSError):
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, os.fsencode(key) + b"\n")
            finally:
                os.close(fd)
            self._noted.add(key)

    def remove_stale(self) -> list[Path]:
        """Remove the scratch files of writers that are gone, and their journals."""
        removed: list[Path] = []
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return removed
        for entry in entries:
            match = _JOURNAL.match(entry.name)
            if match is None:
                continue
            pid, start = int(match[1]), int(match[2])
            if _alive(pid, start):
                continue
            try:
                folders = Path(entry.path).read_bytes().splitlines()
            except OSError:
                continue
            for folder in dict.fromkeys(folders):
                removed += _remove_dead_in(Path(os.fsdecode(folder)))
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        return removed


def _remove_dead_in(folder: Path) -> list[Path]:
    """Scratch files in `folder` whose writer is gone (any writer: one pass serves all)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        match = _NAME.match(entry.name)
        if match is None or _alive(int(match[1]), int(match[2])):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed
