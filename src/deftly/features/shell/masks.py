"""What the sandbox hides: the workspace's secret files and the user's credential files.

Inside the sandbox each of them is covered by an empty read-only file (a credential
directory by an empty read-only directory), so a command that names it, however quoted,
reads nothing. Secrets of the workspace are what the file tools refuse: names that
`sensitive_reason` flags, and `*.pem` / `*.key` files whose header is a private key.

Finding them walks the workspace, which costs about 50 ms on a 20,000-file tree; doing
that before every command would triple the cost of `echo hi`. So the walk is remembered
per directory, with the directory's mtime: adding, removing or renaming an entry changes
it, so before each command only the directories are stat'ed again (a few ms for 20,000
files) and only the changed ones are read again. A directory modified within the last
second is read again every time (its mtime may not yet show a change made in the same
clock tick). Key files are re-read only when their size or mtime changed. Heavy folders
nobody keeps secrets in (`.git`, `node_modules`, virtualenvs, caches) are not walked.

Every look goes through the `ExecEnv` the commands run in (its `scandir`, `stat` and path
probe), so the paths found are in that environment's view, the one bubblewrap is given.
The cover files themselves (`MaskSources`) are made on the machine bubblewrap runs on.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deftly.contract.fs import EntryKind, FileStat, PathProbe
from deftly.contract.records import frozen
from deftly.env.base import ExecEnv
from deftly.env.local import LocalEnv
from deftly.policy.paths import real_path_text
from deftly.policy.sensitive import private_key_reason, sensitive_reason

USER_CREDENTIALS: tuple[str, ...] = (
    ".aws/credentials",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/legacy_credentials",
    ".azure/accessTokens.json",
    ".azure/msal_token_cache.json",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".pgpass",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    ".kube/config",
    ".config/gh/hosts.yml",
)
"""Credential files under the home directory, masked in every sandboxed command, besides
the SSH private keys of `~/.ssh` (by name, `id_*` but not `*.pub`, or by a private-key
header). A directory here is masked whole."""

SSH_DIR = ".ssh"
PRUNED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)
MAX_DIRECTORIES = 20_000
MAX_SCAN_SECONDS = 2.0
RECENT_NS = 1_000_000_000
_KEY_SUFFIXES = (".pem", ".key")
_NAME_MARKERS = ("env", "id_", "credential", "netrc", "pgpass")


@frozen
class Mask:
    """A path to cover inside the sandbox: with an empty directory if `directory`."""

    path: Path
    directory: bool = False


def _may_be_secret(name: str) -> bool:
    """A cheap filter before `sensitive_reason`: every name it flags contains a marker."""
    low = name.lower()
    return any(marker in low for marker in _NAME_MARKERS)


@dataclass(slots=True)
class _Listing:
    """One directory as last read: its mtime, its secrets, its key files, its subdirectories
    (paths as strings: the walk before each command stats every directory, and Path objects
    would double its cost)."""

    mtime_ns: int
    inode: int
    trusted: bool
    """Its mtime was more than a second old when read: an unchanged mtime means no change."""
    secrets: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    subdirs: list[str] = field(default_factory=list)


@frozen
class ScanResult:
    """The secret files found, and whether the walk had to stop early (then it says why)."""

    secrets: tuple[Path, ...]
    incomplete: str | None = None


class SecretScanner:
    """The workspace's secret files, kept up to date cheaply (see the module docstring)."""

    def __init__(
        self,
        max_directories: int = MAX_DIRECTORIES,
        max_seconds: float = MAX_SCAN_SECONDS,
        *,
        env: ExecEnv | None = None,
    ) -> None:
        self.env = env or LocalEnv()
        self.max_directories = max_directories
        self.max_seconds = max_seconds
        self._listings: dict[str, _Listing] = {}
        self._keys: dict[str, tuple[int, int, int, bool]] = {}
        self._lock = threading.Lock()

    def scan(self, roots: Iterable[Path]) -> ScanResult:
        """The secret files below `roots` now (real paths), from the remembered walk."""
        probe = self.env.path_probe()
        with self._lock:
            return self._scan([_real_text(root, probe) for root in roots])

    def _scan(self, roots: list[str]) -> ScanResult:
        deadline = time.monotonic() + self.max_seconds
        seen: set[str] = set()
        stack = list(reversed(roots))
        found: list[str] = []
        keys: list[str] = []
        incomplete: str | None = None
        listings = self._listings
        probe_stat = self.env.path_probe().stat  # plain strings: this runs per directory
        while stack:
            directory = stack.pop()
            if directory in seen:
                continue
            if len(seen) >= self.max_directories or (
                len(seen) % 64 == 0 and time.monotonic() > deadline
            ):
                incomplete = (
                    f"the walk stopped after {len(seen):,} directories "
                    f"({self.max_directories:,} or {self.max_seconds:g} s at most)"
                )
                break
            seen.add(directory)
            try:
                info = probe_stat(directory)
            except OSError:
                continue
            listing = listings.get(directory)
            if (
                listing is None
                or not listing.trusted
                or listing.mtime_ns != info.st_mtime_ns
                or listing.inode != info.st_ino
            ):
                listing = self._read(directory, info)
                if listing is None:
                    continue
                listings[directory] = listing
            found.extend(listing.secrets)
            keys.extend(listing.keys)
            stack.extend(reversed(listing.subdirs))
        if incomplete is None:
            self._listings = {d: entry for d, entry in listings.items() if d in seen}
            wanted = set(keys)
            self._keys = {k: v for k, v in self._keys.items() if k in wanted}
        found.extend(key for key in keys if self._is_private_key(key))
        return ScanResult(tuple(Path(p) for p in dict.fromkeys(found)), incomplete)

    def _read(self, directory: str, info: FileStat) -> _Listing | None:
        trusted = time.time_ns() - info.st_mtime_ns > RECENT_NS
        listing = _Listing(info.st_mtime_ns, info.st_ino, trusted)
        try:
            entries = list(self.env.scandir(Path(directory)))
        except OSError:
            return None
        lowered = directory.lower()
        cloud = ".aws" in lowered or ".gcp" in lowered  # sensitive_reason looks at the path
        for entry in entries:
            name = entry.name
            if entry.kind is EntryKind.DIR:
                if name not in PRUNED_DIRS:
                    listing.subdirs.append(entry.path)
                continue
            if (cloud or _may_be_secret(name)) and sensitive_reason(entry.path) is not None:
                listing.secrets.append(entry.path)
            elif name.lower().endswith(_KEY_SUFFIXES):
                listing.keys.append(entry.path)
        listing.subdirs.sort()
        return listing

    def _is_private_key(self, path: str) -> bool:
        try:
            info = self.env.stat(Path(path))
        except OSError:
            return False
        signature = (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._keys.get(path)
        if cached is not None and cached[:3] == signature:
            return cached[3]
        private = private_key_reason(path, self.env.path_probe()) is not None
        self._keys[path] = (*signature, private)
        return private


def user_credentials(
    home: Path, keep: Sequence[Path] = (), env: ExecEnv | None = None
) -> list[Mask]:
    """The user's credential files that exist: `USER_CREDENTIALS` and the SSH private keys
    (and other names `sensitive_reason` flags) in `~/.ssh`. Paths in `keep` (the SSH agent's
    socket) and what contains them stay visible. Looked at through `env` (this machine by
    default)."""
    env = env or LocalEnv()
    probe = env.path_probe()
    masks: list[Mask] = []
    for relative in USER_CREDENTIALS:
        path = home / relative
        with contextlib.suppress(OSError):
            if env.stat(path).is_dir():
                masks.append(Mask(path, directory=True))
            else:
                masks.append(Mask(path))
    ssh = home / SSH_DIR
    with contextlib.suppress(OSError):
        for entry in env.scandir(ssh):
            path = Path(entry.path)
            if not _is_file(env, entry.path, entry.kind):
                continue
            if sensitive_reason(path) is not None or _holds_private_key(probe, entry.path):
                masks.append(Mask(path))
    kept = [Path(_real_text(p, probe)) for p in keep]
    return [m for m in masks if not any(k == m.path or m.path in k.parents for k in kept)]


def _is_file(env: ExecEnv, path: str, kind: EntryKind) -> bool:
    """Whether an entry is a regular file or a link to one."""
    if kind is EntryKind.FILE:
        return True
    if kind is not EntryKind.SYMLINK:
        return False
    try:
        return env.stat(Path(path)).is_file()
    except OSError:
        return False


def _holds_private_key(probe: PathProbe, path: str) -> bool:
    """Any private key, whatever its name (`~/.ssh/deploy`): its first bytes say so."""
    head = probe.read_header(path, 4096)
    return head is not None and b"PRIVATE KEY" in head


def _real_text(path: str | os.PathLike[str], probe: PathProbe) -> str:
    """The real path of `path` through `probe` (as written when it cannot be resolved)."""
    try:
        return real_path_text(os.path.abspath(path), probe)
    except OSError:
        return os.path.abspath(path)


def resolve_masks(masks: Iterable[Mask], env: ExecEnv | None = None) -> list[Mask]:
    """The real paths to cover, for what exists now: a link is followed (covering its
    target covers every name of it), a vanished path is dropped (bubblewrap would create an
    empty file in its place), and each real path appears once. Looked at through `env`
    (this machine by default)."""
    env = env or LocalEnv()
    probe = env.path_probe()
    out: dict[Path, Mask] = {}
    for mask in masks:
        real = Path(_real_text(mask.path, probe))
        try:
            mode = env.stat(real).st_mode
        except OSError:
            continue
        if mask.directory and stat.S_ISDIR(mode):
            out.setdefault(real, Mask(real, directory=True))
        elif not mask.directory and stat.S_ISREG(mode):
            out.setdefault(real, Mask(real))
    return list(out.values())


class MaskSources:
    """An empty file and an empty directory to bind over secrets, in a private folder of
    this process (removed at exit). Checked before each use and made again if anything
    changed them: a command must not be able to turn the cover into the secret."""

    def __init__(self, show: Callable[[Path], Path] | None = None) -> None:
        """`show`: where a folder of this machine appears to the commands (the env's
        `session_area`: a rooted env mounts it in its view); as it is by default."""
        self._folder: Path | None = None
        self._lock = threading.Lock()
        self._show = show

    def folder(self) -> Path:
        """The private folder holding the cover files, made again if anything changed it."""
        with self._lock:
            if self._folder is None or not self._intact(self._folder):
                self._folder = self._create()
            return self._folder

    @staticmethod
    def _intact(folder: Path) -> bool:
        try:
            file_info = os.lstat(folder / "empty")
            dir_info = os.lstat(folder / "empty.d")
            return (
                stat.S_ISREG(file_info.st_mode)
                and file_info.st_size == 0
                and file_info.st_uid == os.getuid()
                and stat.S_ISDIR(dir_info.st_mode)
                and not os.listdir(folder / "empty.d")
            )
        except OSError:
            return False

    @staticmethod
    def _create() -> Path:
        folder = Path(tempfile.mkdtemp(prefix="deftly-sandbox-"))
        (folder / "empty").touch(mode=0o444)
        (folder / "empty.d").mkdir(mode=0o555)
        atexit.register(shutil.rmtree, folder, True)
        return folder

    def args(self, masks: Iterable[Mask]) -> list[str]:
        """bubblewrap arguments: the private folder read-only, then every cover."""
        folder = self.folder()
        if self._show is not None:
            folder = self._show(folder)
        args = ["--ro-bind", str(folder), str(folder)]
        for mask in masks:
            source = folder / ("empty.d" if mask.directory else "empty")
            args += ["--ro-bind", str(source), str(mask.path)]
        return args
