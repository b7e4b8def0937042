"""Is a directory inside a git work tree, and where are that tree's control files?

Read from the file system (a few `stat` calls, no `git` process): a `.git` directory, or a
`.git` file saying `gitdir: <path>` (worktrees, submodules). Used by the permission chain:
paths in git's control directories always ask, and in manual mode a change to a file git
can restore (tracked and clean: `file_state`, one `git status` of that path) is approved.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from enum import StrEnum
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


class FileState(StrEnum):
    """What git says about one existing file of its work tree."""

    CLEAN = "clean"
    """Tracked and unchanged since the last commit: git can restore it."""
    UNTRACKED = "untracked"
    IGNORED = "ignored"
    CHANGED = "changed"
    """Tracked, with changes not committed (staged or not)."""
    UNKNOWN = "unknown"
    """git could not tell (not installed, timed out, failed): treated as not restorable."""


GIT_TIMEOUT = 3.0
_STATUS_CODES = {"??": FileState.UNTRACKED, "!!": FileState.IGNORED}


def file_state(tree: GitTree, path: Path, timeout: float = GIT_TIMEOUT) -> tuple[FileState, str]:
    """What git says about the existing file `path` (a real path inside `tree`), and why
    when it could not tell. One `git status` of that one path; no lock is taken, and
    fsmonitor hooks are switched off so no repository setting runs a program."""
    try:
        relative = path.relative_to(tree.top)
    except ValueError:
        return FileState.UNKNOWN, f"{path} is not inside the git work tree {tree.top}"
    command = [
        "git",
        "-c",
        "core.fsmonitor=false",
        "status",
        "--porcelain=v1",
        "-z",
        "--ignored=matching",
        "--untracked-files=all",
        "--no-renames",
        "--",
        f":(literal){relative.as_posix()}",
    ]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            command,
            cwd=tree.top,
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return FileState.UNKNOWN, f"git could not be run ({exc})"
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return FileState.UNKNOWN, f"git status failed ({error[0] if error else done.returncode})"
    entries = [entry for entry in done.stdout.split(b"\0") if entry]
    if not entries:
        return FileState.CLEAN, ""
    code = entries[0][:2].decode("ascii", "replace")
    return _STATUS_CODES.get(code, FileState.CHANGED), ""
