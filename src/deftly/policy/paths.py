"""The path policy: one entry point every path-taking tool calls in `resolve`.

Paths are resolved for real, the way the kernel will: `~` is expanded, relative paths are
joined to the working directory, and symlinks are followed (`..` after a symlinked
directory goes to the parent of the link's *target*). Containment is decided on both the
lexical path and the real one, so a link inside the workspace that points outside is
outside. The real path is what a tool then reads or writes.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from deftly.contract.errors import PathSecurityError
from deftly.contract.fs import LOCAL_PROBE, LinkLoopError, PathProbe, follow_links
from deftly.contract.records import frozen
from deftly.policy.sensitive import private_key_reason, sensitive_reason


class PathOp(StrEnum):
    """What a tool does with a path: read it, write it, or search below it."""

    READ = "read"
    WRITE = "write"
    SEARCH = "search"

    @property
    def verb(self) -> str:
        """The operation as a verb for messages ("write or edit")."""
        return {"read": "read", "write": "write or edit", "search": "search"}[self.value]


@frozen
class ResolvedPath:
    """A path a tool may use: as given, as written out, where it really is, and whether
    it is outside the workspace (allowed for absolute paths, left to the permissions)."""

    raw: str
    lexical: Path
    real: Path
    outside: bool


SymlinkLoopError = LinkLoopError
"""A path goes through more links than the kernel would follow (a loop)."""


@functools.lru_cache(maxsize=4096)
def path_of(text: str) -> Path:
    """`Path(text)`, remembered: a function of the text alone, and 3.11's pathlib parses
    in Python, which cost more than every look-up of a small call (a call builds the path
    it was given and its real path; a session uses few paths, and a repeated one is free;
    a `Path` is immutable, so one may be shared)."""
    return Path(text)


def real_path(path: str | os.PathLike[str], probe: PathProbe = LOCAL_PROBE) -> Path:
    """Resolve symlinks component by component, like the kernel does.

    Components that do not exist are kept as written (a new file's path resolves through
    its deepest existing ancestor). A chain of more than 40 links raises SymlinkLoopError.
    A relative path is taken from the current directory. Every look at the file system
    goes through `probe` (the environment's view; this machine by default).
    """
    return path_of(real_path_text(path, probe))


@dataclass(slots=True)
class Lookups:
    """Paths already looked up (see `one_look`): real paths by text and probe, and the
    path policy's answers by workspace, path as given and operation."""

    reals: dict[tuple[str, PathProbe], str] = field(default_factory=dict)
    located: dict[tuple[object, ...], ResolvedPath] = field(default_factory=dict)
    contained: dict[tuple[object, ...], bool] = field(default_factory=dict)

    def clear(self) -> None:
        """Forget everything: the files may have changed."""
        self.reals.clear()
        self.located.clear()
        self.contained.clear()


_LOOKED_UP: ContextVar[Lookups | None] = ContextVar("deftly_real_paths", default=None)


@contextmanager
def one_look(lookups: Lookups | None = None) -> Iterator[None]:
    """Within this block each path is resolved through its links once: the tool's
    resolution, the permission checks and the secret checks see the same real path,
    looked up once. `lookups` carries them over from one block to the next (a batch's
    calls; whoever holds it clears it when something may have changed the files). The
    tool's open is pinned to the real path (`pinned=True`), so a link swapped in after
    the look-up is still caught there, as without this block."""
    token = _LOOKED_UP.set(Lookups() if lookups is None else lookups)
    try:
        yield
    finally:
        _LOOKED_UP.reset(token)


def real_path_text(path: str | os.PathLike[str], probe: PathProbe = LOCAL_PROBE) -> str:
    """`real_path` as a string. (Works on strings throughout: this runs for every path of
    every call, and `Path` objects cost more than the `lstat` calls.)"""
    text = os.fspath(path)
    if not text.startswith("/"):
        text = os.path.abspath(text)
    looked_up = _LOOKED_UP.get()
    if looked_up is None:
        return follow_links(text, probe.link_target, probe.lexists)
    reals = looked_up.reals
    found = reals.get((text, probe))
    if found is None:
        found = follow_links(text, probe.link_target, probe.lexists)
        reals[(text, probe)] = found
        reals[(found, probe)] = found  # a real path leads to itself
    return found


def normal_path(path: str | os.PathLike[str]) -> Path:
    """`os.path.normpath`, except that a leading `//` means `/` (as it does on Linux), so
    `//etc/passwd` is compared and matched as `/etc/passwd`."""
    return path_of(normal_text(path))


def normal_text(path: str | os.PathLike[str]) -> str:
    """`normal_path` as a string."""
    text = os.path.normpath(path)
    if text.startswith("//"):
        text = "/" + text.lstrip("/")
    return text


def _is_within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    inner, outer = os.fspath(path), os.fspath(root)
    if inner == outer:
        return True
    return inner.startswith(outer if outer.endswith("/") else outer + "/")


@frozen
class _Within:
    """`_is_within` against several roots at once: the roots themselves, and the prefixes
    a path below one of them starts with."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, roots: tuple[str, ...]) -> _Within:
        prefixes = tuple(r if r.endswith("/") else r + "/" for r in roots)
        return cls(frozenset(roots), prefixes)

    def holds(self, path: str) -> bool:
        return path in self.exact or path.startswith(self.prefixes)


@dataclass
class Workspace:
    """One workspace: its root, the working directory, and directories also allowed.

    Paths are in the view of the environment the tools use; `probe` is how that
    environment is looked at (`ExecEnv.path_probe()`; this machine by default)."""

    root: Path
    cwd: Path | None = None
    additional_dirs: list[Path] = field(default_factory=list)
    home: Path = field(default_factory=Path.home)
    probe: PathProbe = field(default=LOCAL_PROBE, repr=False, compare=False)
    _real_cache: tuple[tuple[Path, ...], tuple[str, ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _within_cache: tuple[tuple[object, ...], _Within, _Within] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.root = normal_path(os.path.abspath(self.root))
        self.cwd = normal_path(os.path.abspath(self.cwd)) if self.cwd else self.root
        self.additional_dirs = [normal_path(os.path.abspath(d)) for d in self.additional_dirs]
        self._real_root = real_path(self.root, self.probe)

    def real_path(self, path: str | os.PathLike[str]) -> Path:
        """`real_path` through this workspace's probe."""
        return path_of(real_path_text(path, self.probe))

    # -- the directories paths may live in ------------------------------------------------

    def add_directory(self, directory: str | os.PathLike[str]) -> None:
        """Allow another directory (the spill directory, a skill root, one the user added)."""
        path = normal_path(os.path.abspath(directory))
        if not any(_is_within(path, d) for d in self.roots):
            self.additional_dirs.append(path)

    def remove_directory(self, directory: str | os.PathLike[str]) -> bool:
        """Stop allowing a directory `add_directory` allowed (a client's root it took back);
        True if it was there."""
        path = normal_path(os.path.abspath(directory))
        if path not in self.additional_dirs:
            return False
        self.additional_dirs.remove(path)
        return True

    @property
    def roots(self) -> tuple[Path, ...]:
        """The root and the additional directories (as written, not resolved)."""
        return (self.root, *self.additional_dirs)

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Is this absolute path inside the workspace, lexically and for real? (Within
        `one_look` the answer is remembered, like the real path it rests on, until the
        look-ups are cleared or the directories change.)"""
        text = os.fspath(path)
        looked_up = _LOOKED_UP.get()
        if looked_up is None or not text.startswith("/"):  # relative: depends on the cwd
            return self._contains(text)
        key = (text, id(self), self.root, *self.additional_dirs)
        found = looked_up.contained.get(key)
        if found is None:
            found = looked_up.contained[key] = self._contains(text)
        return found

    def _contains(self, path: str | os.PathLike[str]) -> bool:
        lexical = normal_text(os.path.abspath(path))
        try:
            real = real_path_text(lexical, self.probe)
        except OSError:
            return False
        return self._inside(lexical, real)

    def _inside(self, lexical: str | Path, real: str | Path) -> bool:
        """Within a root (as written or for real) lexically, and within a real root for
        real. (`_is_within` over every root, done with one `startswith` per side.)"""
        real_roots = self._real_roots()
        key = (self.root, real_roots, *self.additional_dirs)
        cached = self._within_cache
        if cached is None or cached[0] != key:
            lexical_roots = (*map(os.fspath, self.roots), *real_roots)
            cached = (key, _Within.of(lexical_roots), _Within.of(real_roots))
            self._within_cache = cached
        return cached[1].holds(os.fspath(lexical)) and cached[2].holds(os.fspath(real))

    def _real_roots(self) -> tuple[str, ...]:
        """The roots' real paths, worked out again only when the directories change."""
        key = tuple(self.additional_dirs)
        if self._real_cache is None or self._real_cache[0] != key:
            roots = [str(self._real_root)]
            for directory in key:
                try:
                    roots.append(real_path_text(directory, self.probe))
                except OSError:
                    continue
            self._real_cache = (key, tuple(roots))
        return self._real_cache[1]

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
        looked_up = _LOOKED_UP.get()
        if looked_up is None or not isinstance(raw, str):
            return self._locate(raw, op, check_sensitive)
        key = (raw, op, check_sensitive, id(self), self.cwd, self.home, *self.additional_dirs)
        found = looked_up.located.get(key)
        if found is None:
            found = self._locate(raw, op, check_sensitive)  # a refusal is not remembered
            looked_up.located[key] = found
        return found

    def _locate(self, raw: str, op: PathOp, check_sensitive: bool) -> ResolvedPath:
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
        # Strings until the end: `Path` objects cost more than the look-ups themselves.
        joined = expanded if raw_is_absolute else os.path.join(os.fspath(self.cwd), expanded)
        lexical = path_of(normal_text(joined))
        try:
            real = path_of(real_path_text(joined, self.probe))
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
            reason = sensitive_reason(candidate) or private_key_reason(candidate, self.probe)
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
