"""Installed packages' entry points, read once for every group deftly looks up.

Each `importlib.metadata.entry_points(group=...)` call reads every installed
distribution's metadata (~7 ms with a hundred packages installed), and a runtime looks up
three groups (tools, skills, search providers). One read serves them all until the import
path changes: a package installed since (a new `*.dist-info` folder in a `sys.path` folder,
which changes that folder's modification time and link count) is seen at the next look-up.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys


def entry_points(group: str) -> importlib.metadata.EntryPoints:
    """The entry points of `group`, as `importlib.metadata.entry_points(group=group)`."""
    key = _path_key()
    found = _Read.found
    if found is None or _Read.key != key:
        found = importlib.metadata.entry_points()
        _Read.found, _Read.key = found, key
    return found.select(group=group)


class _Read:
    key: tuple[tuple[str, int, int], ...] = ()
    # Python 3.11 returns SelectableGroups (all groups), 3.12 EntryPoints; both select.
    found: importlib.metadata.SelectableGroups | importlib.metadata.EntryPoints | None = None


def _path_key() -> tuple[tuple[str, int, int], ...]:
    """Each import-path folder with its modification time and link count (-1: none there)."""
    key: list[tuple[str, int, int]] = []
    for folder in sys.path:
        try:
            st = os.stat(folder or ".")
        except OSError:
            key.append((folder, -1, -1))
        else:
            key.append((folder, st.st_mtime_ns, st.st_nlink))
    return tuple(key)
