"""Is a directory inside a git work tree, and where are that tree's control files?

Read from the file system (a few `stat` calls, no `git` process): a `.git` directory, or a
`.git` file saying `gitdir: <path>` (worktrees, submodules). Used by the permission chain:
paths in git's control directories always ask, and in manual mode a change to a file git
can restore (tracked and clean: `file_state`, one `git status` of that path) is approved.

Every look goes through a `PathProbe` (the environment's: `git status` runs where the
files are, in the environment's view of paths), this machine's by default.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from deftly.contract.fs import LOCAL_PROBE, PathProbe
from deftly.contract.records import frozen
from deftly.policy.paths import real_path


@frozen
class GitTree:
    """A git work tree: where it starts, and git's own directories for it."""

    top: Path
    """The work tree's top directory (real path)."""
    control_dirs: tuple[Path, ...]
    """git's own directories for this tree (the `.git` dir, or the worktree gitdir and the
    common dir it points to), real paths."""


def find_git_tree(start: Path, probe: PathProbe = LOCAL_PROBE) -> GitTree | None:
    """The git work tree that contains `start`, or None."""
    try:
        here = real_path(start, probe)
    except OSError:
        return None
    for directory in (here, *here.parents):
        if directory.name.lower() == ".git":
            return None  # inside git's own directory: not a work tree
        marker = directory / ".git"
        try:
            info = probe.stat(os.fspath(marker))
        except OSError:
            continue
        if info.is_dir():
            if _exists(probe, marker / "HEAD"):
                return GitTree(directory, (real_path(marker, probe),))
            continue
        if info.is_file():
            control = _gitdir_from_file(marker, probe)
            if control is not None:
                return GitTree(directory, control)
    return None


def _exists(probe: PathProbe, path: Path) -> bool:
    """Whether `path` leads to something (links followed)."""
    try:
        probe.stat(os.fspath(path))
    except OSError:
        return False
    return True


def _read_text(probe: PathProbe, path: Path) -> str | None:
    """The start of a small text file (4096 bytes), or None when it cannot be read."""
    try:
        real = real_path(path, probe)
    except OSError:
        return None
    data = probe.read_header(os.fspath(real), 4096)
    return None if data is None else data.decode("utf-8", "replace")


def _gitdir_from_file(marker: Path, probe: PathProbe) -> tuple[Path, ...] | None:
    text = _read_text(probe, marker)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line.removeprefix("gitdir:").strip())
            gitdir = real_path(target if target.is_absolute() else marker.parent / target, probe)
            dirs = [gitdir]
            common = (_read_text(probe, gitdir / "commondir") or "").strip()
            if common:
                common_path = Path(common)
                dirs.append(
                    real_path(
                        common_path if common_path.is_absolute() else gitdir / common_path, probe
                    )
                )
            return tuple(dict.fromkeys(dirs))
    return None


def has_git_component(path: str | os.PathLike[str]) -> bool:
    """Does the path go through a directory (or name a file) called `.git`, in any case?"""
    return ".git" in os.fspath(path).lower().split("/")


def is_within(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it (both already resolved)."""
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


def file_state(
    tree: GitTree, path: Path, timeout: float = GIT_TIMEOUT, probe: PathProbe = LOCAL_PROBE
) -> tuple[FileState, str]:
    """What git says about the existing file `path` (a real path inside `tree`), and why
    when it could not tell. One `git status` of that one path, run through `probe` (where
    the files are); no lock is taken, and fsmonitor hooks are switched off so no
    repository setting runs a program."""
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
    env = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = probe.run_command(command, cwd=os.fspath(tree.top), env=env, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        return FileState.UNKNOWN, f"git could not be run ({exc})"
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return FileState.UNKNOWN, f"git status failed ({error[0] if error else done.returncode})"
    entries = [entry for entry in done.stdout.split(b"\0") if entry]
    if not entries:
        return FileState.CLEAN, ""
    code = entries[0][:2].decode("ascii", "replace")
    return _STATUS_CODES.get(code, FileState.CHANGED), ""
