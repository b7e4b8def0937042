"""The path policy: one entry point every path-taking tool calls in `resolve`.

Paths are resolved for real, the way the kernel will: `~` is expanded, relative paths are
joined to the working directory, and symlinks are followed (`..` after a symlinked
directory goes to the parent of the link's *target*). Containment is decided on both the
lexical path and the real one, so a link inside the workspace that points outside is
outside. The real path is what a tool then reads or writes.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from deftly.contract.errors import PathSecurityError
from deftly.policy.sensitive import private_key_reason, sensitive_reason

_MAX_SYMLINKS = 40
_ROOT = Path("/")


class PathOp(StrEnum):
    READ = "read"
    WRITE = "write"
    SEARCH = "search"

    @property
    def verb(self) -> str:
        return {"read": "read", "write": "write or edit", "search": "search"}[self.value]


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    raw: str
    lexical: Path
    real: Path
    outside: bool


class SymlinkLoopError(OSError):
    pass


def real_path(path: Path) -> Path:
    """Resolve symlinks component by component, like the kernel does.

    Components that do not exist are kept as written (a new file's path resolves through
    its deepest existing ancestor). A chain of more than 40 links raises SymlinkLoopError.
    """
    pending = list(reversed(path.parts[1:]))
    current = _ROOT if path.anchor.startswith("/") else Path(path.anchor or "/")
    hops = 0
    missing = False
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            if missing:
                # Back above a missing component: what is left may exist again (and may be
                # a symlink further on), so keep resolving for real.
                missing = not os.path.lexists(current)
            continue
        candidate = current / part
        if missing:
            current = candidate
            continue
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            missing = True
            current = candidate
            continue
        except NotADirectoryError:
            missing = True
            current = candidate
            continue
        if not stat.S_ISLNK(info.st_mode):
            current = candidate
            continue
        hops += 1
        if hops > _MAX_SYMLINKS:
            raise SymlinkLoopError(errno.ELOOP, "too many levels of symbolic links", str(path))
        target = Path(os.readlink(candidate))
        if target.is_absolute():
            current = _ROOT if target.anchor.startswith("/") else Path(target.anchor)
            pending.extend(reversed(target.parts[1:]))
        else:
            pending.extend(reversed(target.parts))
    return current


def normal_path(path: str | os.PathLike[str]) -> Path:
    """`os.path.normpath`, except that a leading `//` means `/` (as it does on Linux), so
    `//etc/passwd` is compared and matched as `/etc/passwd`."""
    text = os.path.normpath(path)
    if text.startswith("//"):
        text = "/" + text.lstrip("/")
    return Path(text)


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass
class Workspace:
    """One workspace: its root, the working directory, and directories also allowed."""

    root: Path
    cwd: Path | None = None
    additional_dirs: list[Path] = field(default_factory=list)
    home: Path = field(default_factory=Path.home)

    def __post_init__(self) -> None:
        self.root = normal_path(os.path.abspath(self.root))
        self.cwd = normal_path(os.path.abspath(self.cwd)) if self.cwd else self.root
        self.additional_dirs = [normal_path(os.path.abspath(d)) for d in self.additional_dirs]
        self._real_root = real_path(self.root)

    # -- the directories paths may live in ------------------------------------------------

    def add_directory(self, directory: str | os.PathLike[str]) -> None:
        """Allow another directory (the spill directory, a skill root, one the user added)."""
        path = normal_path(os.path.abspath(directory))
        if not any(_is_within(path, d) for d in self.roots):
            self.additional_dirs.append(path)

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.root, *self.additional_dirs)

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Is this absolute path inside the workspace, lexically and for real?"""
        lexical = normal_path(os.path.abspath(path))
        try:
            real = real_path(lexical)
        except OSError:
            return False
        return self._inside(lexical, real)

    def _inside(self, lexical: Path, real: Path) -> bool:
        lexical_ok = any(_is_within(lexical, r) for r in self.roots) or any(
            _is_within(lexical, r) for r in self._real_roots()
        )
        real_ok = any(_is_within(real, r) for r in self._real_roots())
        return lexical_ok and real_ok

    def _real_roots(self) -> Iterable[Path]:
        yield self._real_root
        for directory in self.additional_dirs:
            try:
                yield real_path(directory)
            except OSError:
                continue

    # -- the entry point -----------------------------------------------------------------

    def resolve(
        self, raw: str, operation: PathOp | str, *, check_sensitive: bool | None = None
    ) -> Path:
        """The real path to operate on, or PathSecurityError. See `locate`."""
        return self.locate(raw, operation, check_sensitive=check_sensitive).real

    def locate(
        self, raw: str, operation: PathOp | str, *, check_sensitive: bool | None = None
    ) -> ResolvedPath:
        """Decide whether a tool may use `raw` for `operation`, and where it really is.

        Relative paths may not leave the workspace; absolute paths outside it are allowed
        here and left to the permission engine. Secret files are refused for reading and
        writing (searches skip them on their own), on the lexical and the real path.
        """
        op = PathOp(operation)
        if check_sensitive is None:
            check_sensitive = op is not PathOp.SEARCH
        text = raw.strip() if isinstance(raw, str) else ""
        if not text:
            raise PathSecurityError(
                "PATH_INVALID", str(raw), "The path is empty. Pass the path of a file."
            )
        if "\0" in text:
            raise PathSecurityError(
                "PATH_INVALID", raw, f"{raw!r} contains a NUL byte, which no path can hold."
            )
        expanded = self._expand_home(text)
        raw_is_absolute = os.path.isabs(expanded)
        assert self.cwd is not None
        joined = Path(expanded) if raw_is_absolute else self.cwd / expanded
        lexical = normal_path(joined)
        try:
            real = real_path(joined)
        except SymlinkLoopError:
            raise PathSecurityError(
                "PATH_LOOP",
                raw,
                f'"{raw}" goes through a loop of symbolic links, so it names no file. '
                "Check the links with `ls -l` and use a path without the loop.",
            ) from None
        except OSError as exc:
            raise PathSecurityError(
                "PATH_INVALID", raw, f'"{raw}" cannot be resolved: {exc.strerror or exc}.'
            ) from None

        if check_sensitive:
            self._refuse_secrets(raw, lexical, real)

        outside = not self._inside(lexical, real)
        if outside and not raw_is_absolute:
            if any(_is_within(lexical, r) for r in self.roots):
                raise PathSecurityError(
                    "PATH_OUTSIDE_WORKSPACE",
                    raw,
                    f'"{raw}" goes through a symbolic link that leads outside the workspace, '
                    f"to {real}. To {op.verb} it there, pass that absolute path instead.",
                    str(real),
                )
            raise PathSecurityError(
                "PATH_OUTSIDE_WORKSPACE",
                raw,
                f'"{raw}" is outside the workspace ({lexical}). Relative paths must stay '
                f"inside the workspace; to {op.verb} a file outside it, pass an absolute path.",
                str(real),
            )
        return ResolvedPath(raw=raw, lexical=lexical, real=real, outside=outside)

    def _expand_home(self, text: str) -> str:
        if text == "~":
            return str(self.home)
        if text.startswith("~/"):
            return str(self.home / text[2:])
        return text

    def _refuse_secrets(self, raw: str, lexical: Path, real: Path) -> None:
        for candidate in (lexical, real):
            reason = sensitive_reason(candidate) or private_key_reason(candidate)
            if reason is None:
                continue
            via = "" if candidate == lexical else f" (it leads to {real})"
            raise PathSecurityError(
                "PATH_SENSITIVE",
                raw,
                f'"{raw}"{via} is {reason}. deftly never reads or writes secret files, in any '
                "mode. If the task needs a value from it, ask the user for that value.",
                str(real),
            )
