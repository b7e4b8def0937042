"""The local machine as an execution environment."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from deftly.env.base import FS, PROCESS, ExecEnv, PathChanged
from deftly.env.scratch import ScratchJournal, scratch_name
from deftly.env.subreaper import become_subreaper


class LocalEnv(ExecEnv):
    name = "local"
    capabilities = frozenset({FS, PROCESS})

    def __init__(self) -> None:
        self._adopted: dict[int, int] = {}
        """Adopted orphans seen alive (pid -> start time), for `reap_adopted`."""
        self._journal: ScratchJournal | None = None

    def keep_scratch_journal(self, directory: Path) -> list[Path]:
        self._journal = ScratchJournal(directory)
        return self._journal.remove_stale()

    def home(self) -> Path:
        return Path.home()

    def environ(self) -> Mapping[str, str]:
        return os.environ

    def stat(self, path: Path) -> os.stat_result:
        return os.stat(path)

    def open_read(self, path: Path, *, pinned: bool = False) -> io.BufferedIOBase:
        if not pinned:
            return open(path, "rb")
        return os.fdopen(_open_pinned(path, os.O_RDONLY), "rb")

    def stat_handle(self, handle: io.BufferedIOBase) -> os.stat_result:
        return os.fstat(handle.fileno())

    def mtimes(self, paths: Sequence[str | bytes]) -> list[float]:
        out: list[float] = []
        append = out.append
        for path in paths:
            try:
                append(os.stat(path).st_mtime)
            except OSError:
                append(0.0)
        return out

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        # Everything happens relative to one open handle on the directory, so the
        # scratch file, the rename and the fsync all land in the same place.
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        directory = _open_pinned(path.parent, flags) if pinned else os.open(path.parent, flags)
        if self._journal is not None:
            self._journal.note(path.parent)
        try:
            _replace_in(directory, path, data, mode, pinned=pinned)
        finally:
            os.close(directory)

    def append(self, path: Path, data: bytes, *, pinned: bool = False) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = _open_pinned(path, flags) if pinned else os.open(path, flags, 0o666)
        try:
            size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)

    def make_dirs(self, path: Path, *, pinned: bool = False) -> None:
        if not pinned:
            path.mkdir(parents=True, exist_ok=True)
            return
        existing, missing = _deepest_existing(path)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        directory = _open_pinned(existing, flags)
        try:
            for name in missing:
                with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                    os.mkdir(name, dir_fd=directory)
                inner = _open_below(directory, name, existing / name)
                os.close(directory)
                directory, existing = inner, existing / name
        finally:
            os.close(directory)

    def scandir(self, path: Path) -> Iterator[os.DirEntry[str]]:
        with os.scandir(path) as entries:
            yield from entries

    def write_temp(self, data: bytes, *, suffix: str = "") -> Path:
        fd, name = tempfile.mkstemp(prefix="deftly-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        return Path(name)

    def remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        merge_stderr: bool = True,
        new_session: bool = True,
        stream_limit: int | None = None,
    ) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=new_session,
            limit=stream_limit or _DEFAULT_STREAM_LIMIT,
        )

    def which(self, program: str, search_path: str | None = None) -> str | None:
        return shutil.which(program, path=search_path)

    # -- process trees -------------------------------------------------------------------

    def open_append(self, path: Path) -> BinaryIO:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        return os.fdopen(fd, "ab")

    async def wait_exit(self, process: asyncio.subprocess.Process) -> int:
        # `wait()` returns once the process exited *and* its pipes closed: the usual case,
        # at once. When a process it left behind holds the pipe, the status that asyncio's
        # child watcher records is polled instead (backing off to 50 ms).
        waiter = asyncio.ensure_future(process.wait())
        try:
            delay = 0.002
            while _returncode(process) is None and not waiter.done():
                await asyncio.wait([waiter], timeout=delay)
                delay = min(delay * 2, 0.05)
        finally:
            if not waiter.done():
                waiter.cancel()
        code = _returncode(process)
        assert code is not None
        return code

    def group_alive(self, group_id: int) -> bool:
        try:
            os.killpg(group_id, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's group now: not ours to judge
            return False
        return True

    def session_processes(self, session_id: int) -> list[int]:
        """Members of the session or the group, found in /proc (where there is one).

        A session id cannot be reused while any process still belongs to that session,
        so every process found here descends from the process `spawn` started, except
        one that started a session of its own (`setsid`), which leaves for good.
        """
        try:
            names = os.listdir("/proc")
        except OSError:
            return [session_id] if self.group_alive(session_id) else []
        found = []
        for name in names:
            if not name.isdigit():
                continue
            fields = _proc_stat(name)
            if fields is None:
                continue
            state, group, session, _, _ = fields
            if state in (b"Z", b"X"):
                continue
            if session_id in (session, group):
                found.append(int(name))
        return found

    def process_mark(self) -> int:
        # Start times in /proc/<pid>/stat are CLOCK_BOOTTIME in clock ticks, truncated.
        # Reading the same clock in integers keeps a process started in this very tick at
        # or before the mark (the float of /proc/uptime times 100 can land one tick short);
        # one tick of slack covers the kernel rounding the other way.
        try:
            ticks_per_second = os.sysconf("SC_CLK_TCK")
            now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        except (OSError, ValueError, AttributeError):
            return 0
        return now * ticks_per_second // 1_000_000_000 + 1

    def stray_processes(self, sessions: Mapping[int, int]) -> dict[int, list[int]]:
        if not sessions:
            return {}
        try:
            names = os.listdir("/proc")
        except OSError:
            return {}
        members: dict[int, list[tuple[int, int]]] = {}
        for name in names:
            if not name.isdigit():
                continue
            fields = _proc_stat(name)
            if fields is None or fields[0] in (b"Z", b"X") or fields[2] not in sessions:
                continue
            members.setdefault(fields[2], []).append((int(name), fields[3]))
        return {
            session: [pid for pid, _ in found]
            for session, found in members.items()
            if any(started <= sessions[session] for _, started in found)
        }

    def adopt_orphans(self) -> bool:
        return become_subreaper()

    def marked_children(self, variable: str) -> dict[int, str]:
        # One pass over /proc/<pid>/stat (no per-thread `children` files on every kernel);
        # the environment is read only for our own children.
        me = os.getpid()
        prefix = variable.encode() + b"="
        found: dict[int, str] = {}
        try:
            names = os.listdir("/proc")
        except OSError:
            return found
        for name in names:
            if not name.isdigit():
                continue
            fields = _proc_stat(name)
            if fields is None or fields[4] != me or fields[0] in (b"Z", b"X"):
                continue
            value = _environ_value(name, prefix)
            if value is not None:
                found[int(name)] = value
                self._adopted[int(name)] = fields[3]
        return found

    def signal_process(self, pid: int, signal_number: int) -> bool:
        fields = _proc_stat(str(pid))
        if fields is None or fields[0] in (b"Z", b"X"):
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal_number)
        if fields[2] == pid:  # it leads a session of its own (`setsid`): all of it
            self.signal_session(pid, signal_number)
        return True

    def reap_adopted(self) -> int:
        # Only pids seen alive as our marked children, i.e. adopted orphans: never a
        # process something else in this program spawned and waits for (asyncio's child
        # watchers wait for their own pids), and the start time must still match, so a
        # reused pid is left alone. No SIGCHLD handler: that belongs to the event loop.
        reaped = 0
        for pid, started in list(self._adopted.items()):
            fields = _proc_stat(str(pid))
            if fields is None or fields[3] != started:
                del self._adopted[pid]  # gone (collected elsewhere) or a new process
                continue
            if fields[0] not in (b"Z", b"X"):
                continue
            with contextlib.suppress(ChildProcessError):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    reaped += 1
            del self._adopted[pid]
        return reaped

    def signal_session(self, session_id: int, signal_number: int) -> int:
        count = 0
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(session_id, signal_number)
            count = 1
        for pid in self.session_processes(session_id):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal_number)
                count += 1
        return count

    def hand_off_output(
        self,
        process: asyncio.subprocess.Process,
        log_path: Path,
        limit: int | None,
        flush: Callable[[bytes], None],
    ) -> None:
        # asyncio keeps the pipe inside the process's transport; this environment made it,
        # so this is the one place that reaches in for it.
        transport: Any = getattr(process, "_transport", None)
        pipe: Any = transport.get_pipe_transport(1) if transport is not None else None
        reader: Any = process.stdout
        if pipe is None or reader is None:
            raise RuntimeError("the process has no output pipe left to hand off")
        pipe.pause_reading()
        fd = os.dup(pipe.get_extra_info("pipe").fileno())
        try:
            os.set_blocking(fd, True)  # asyncio made it non-blocking; the copier must wait
            buffered = getattr(reader, "_buffer", None)
            if buffered:
                data = bytes(buffered)
                buffered.clear()
                flush(data)
            _spawn_relay(fd, log_path, limit)
        finally:
            os.close(fd)
        pipe.close()
        # Nothing is left for asyncio to close, and a handed-off process must not be killed
        # when its transport is garbage-collected (what an unclosed transport does).
        transport._closed = True

    def release(self, process: asyncio.subprocess.Process) -> None:
        transport: Any = getattr(process, "_transport", None)
        if transport is not None and process.returncode is not None:
            transport.close()


_umask_lock = threading.Lock()


def _umask() -> int:
    """The process umask, read without changing it where the OS says it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        current = os.umask(0o022)
        os.umask(current)
    return current


def _keep_owner(fd: int, existing: os.stat_result) -> None:
    """Give the new file the old one's owner and group, when we are allowed to."""
    if existing.st_uid == os.geteuid() and existing.st_gid == os.getegid():
        return
    with contextlib.suppress(OSError, AttributeError):
        os.fchown(fd, existing.st_uid, existing.st_gid)


_DEFAULT_STREAM_LIMIT = 2**16


def _returncode(process: asyncio.subprocess.Process) -> int | None:
    return process.returncode


def _proc_stat(pid: str) -> tuple[bytes, int, int, int, int] | None:
    """(state, process group, session, start time, parent) of one process, from
    /proc/<pid>/stat."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name is in parentheses and may itself hold spaces or parentheses.
    rest = data[data.rfind(b")") + 2 :].split(None, 20)
    try:
        return rest[0], int(rest[2]), int(rest[3]), int(rest[19]), int(rest[1])
    except (IndexError, ValueError):
        return None


def _environ_value(pid: str, prefix: bytes) -> str | None:
    """The value of one variable in a process's initial environment, if it is set."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", "replace")
    return None


_RELAY = """
import os, sys
if os.fork():
    os._exit(0)
out = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
room = int(sys.argv[2])
while True:
    try:
        data = os.read(0, 65536)
    except OSError:
        break
    if not data:
        break
    if room != 0:
        chunk = data if room < 0 else data[:room]
        room = room if room < 0 else room - len(chunk)
        os.write(out, chunk)
"""


def _spawn_relay(fd: int, log_path: Path, limit: int | None) -> None:
    """Copy what arrives on `fd` to the end of `log_path` (at most `limit` bytes, the rest
    read and dropped) from a small process of its own.

    The copier forks and its parent exits at once, so it outlives this process (with this
    process a child subreaper it is our child until we exit, then init's; it carries no
    task mark, so no sweep stops it). It writes every chunk as it arrives (no
    buffering), so the log is always current.
    """
    room = -1 if limit is None else max(limit, 0)
    argv = [sys.executable, "-I", "-S", "-c", _RELAY, os.fspath(log_path), str(room)]
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawn(
            sys.executable,
            argv,
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_DUP2, fd, 0),
                (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(devnull)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _open_pinned(path: Path, flags: int, mode: int = 0o666) -> int:
    """Open a real path the policy checked, refusing with PathChanged if it now leads
    elsewhere: the last component may not be a link (O_NOFOLLOW), and the kernel's own
    name for what was opened must be the checked path (a directory on the way may have
    been swapped for a link)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.ENOTDIR and flags & os.O_DIRECTORY and os.path.islink(path)
        ):
            raise PathChanged(path, "a symbolic link") from None
        raise
    try:
        now = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fd  # no /proc here: O_NOFOLLOW is all the check there is
    if now != os.fspath(path):
        os.close(fd)
        raise PathChanged(path, now)
    return fd


def _deepest_existing(path: Path) -> tuple[Path, list[str]]:
    """The deepest ancestor of `path` (itself included) that exists, and the names of the
    directories missing below it, top first."""
    missing: list[str] = []
    current = path
    while True:
        try:
            os.lstat(current)
            return current, missing[::-1]
        except OSError:
            if current.parent == current:
                raise
            missing.append(current.name)
            current = current.parent


def _open_below(directory: int, name: str, path: Path) -> int:
    """Open the directory `name` inside the open `directory`, never through a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.ENOTDIR
            and stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
        ):
            raise PathChanged(path, "a symbolic link") from None
        raise


def _replace_in(directory: int, path: Path, data: bytes, mode: int | None, *, pinned: bool) -> None:
    name = path.name
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        if pinned:
            raise PathChanged(path, "a symbolic link")
        existing = os.stat(path)  # an unchecked link: keep what it points at's mode
    if mode is None:
        mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
    scratch = _scratch_file(directory, name)
    try:
        with os.fdopen(scratch[0], "wb") as handle:
            if existing is not None:
                _keep_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch[1], name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch[1], dir_fd=directory)
        raise
    with contextlib.suppress(OSError):
        os.fsync(directory)  # the rename itself is durable


def _scratch_file(directory: int, name: str) -> tuple[int, str]:
    """A new private file beside `name` in `directory`, for an atomic replace, named for
    this process (see `scratch.py`) so a later runtime can tell a dead writer's."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        scratch = scratch_name(name)
        try:
            return os.open(scratch, flags, 0o600, dir_fd=directory), scratch
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a scratch file beside {name}")
