"""Is a directory inside a git work tree, and where are that tree's control files?

Read from the file system (a few `stat` calls, no `git` process): a `.git` directory, or a
`.git` file saying `gitdir: <path>` (worktrees, submodules). Used by the permission chain:
paths in git's control directories always ask, and Write/Edit inside a work tree (where
git can undo them) are approved in manual mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from deftly.policy.paths import real_path


@dataclass(frozen=True, slots=True)
class GitTree:
    top: Path
    """The work tree's top directory (real path)."""
    control_dirs: tuple[Path, ...]
    """git's own directories for this tree (the `.git` dir, or the worktree gitdir and the
    common dir it points to), real paths."""


def find_git_tree(start: Path) -> GitTree | None:
    """The git work tree that contains `start`, or None."""
    try:
        here = real_path(start)
    except OSError:
        return None
    for directory in (here, *here.parents):
        if directory.name.lower() == ".git":
            return None  # inside git's own directory: not a work tree
        marker = directory / ".git"
        try:
            info = os.stat(marker)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            if (marker / "HEAD").exists():
                return GitTree(directory, (real_path(marker),))
            continue
        if stat.S_ISREG(info.st_mode):
            control = _gitdir_from_file(marker)
            if control is not None:
                return GitTree(directory, control)
    return None


def _gitdir_from_file(marker: Path) -> tuple[Path, ...] | None:
    try:
        text = marker.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line.removeprefix("gitdir:").strip())
            gitdir = real_path(target if target.is_absolute() else marker.parent / target)
            dirs = [gitdir]
            try:
                common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
            except OSError:
                common = ""
            if common:
                common_path = Path(common)
                dirs.append(
                    real_path(common_path if common_path.is_absolute() else gitdir / common_path)
                )
            return tuple(dict.fromkeys(dirs))
    return None


def has_git_component(path: str | os.PathLike[str]) -> bool:
    """Does the path go through a directory (or name a file) called `.git`, in any case?"""
    return ".git" in os.fspath(path).lower().split("/")


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
