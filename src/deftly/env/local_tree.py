"""The local machine's process tree: processes found in `/proc`, signalled by pid.

deftly is a child subreaper here (`adopt_orphans`), so what a command leaves behind when
it leaves its session comes back to deftly and can be found by the task mark in its
environment. Linux only in full; without `/proc`, lookups find nothing and say so.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from deftly.contract.fs import Process
from deftly.env.subreaper import become_subreaper
from deftly.env.tree import ProcessTree, exit_status


class LocalProcessTree(ProcessTree):
    """`ProcessTree` for this machine (see the module doc)."""

    def __init__(self) -> None:
        self._adopted: dict[int, int] = {}
        """Adopted orphans seen alive (pid -> start time), for `reap_adopted`."""

    async def wait_exit(self, process: Process) -> int:
        """See `ProcessTree.wait_exit` (`exit_status`: asyncio's child watcher sets
        `returncode` at the exit)."""
        return await exit_status(process)

    def group_alive(self, group_id: int) -> bool:
        """See `ProcessTree.group_alive`."""
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
        """See `ProcessTree.process_mark`."""
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
        """See `ProcessTree.stray_processes`."""
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
        """See `ProcessTree.adopt_orphans`."""
        return become_subreaper()

    def marked_children(self, variable: str) -> dict[int, str]:
        """See `ProcessTree.marked_children`."""
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
        """See `ProcessTree.signal_process`."""
        fields = _proc_stat(str(pid))
        if fields is None or fields[0] in (b"Z", b"X"):
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal_number)
        if fields[2] == pid:  # it leads a session of its own (`setsid`): all of it
            self.signal_session(pid, signal_number)
        return True

    def signal_one(self, pid: int, signal_number: int) -> bool:
        """See `ProcessTree.signal_one`."""
        try:
            os.kill(pid, signal_number)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def reap_adopted(self) -> int:
        """See `ProcessTree.reap_adopted`."""
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
        """See `ProcessTree.signal_session`."""
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
        process: Process,
        log_path: Path,
        limit: int | None,
        flush: Callable[[bytes], None],
    ) -> None:
        """See `ProcessTree.hand_off_output`."""
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
