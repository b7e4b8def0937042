"""The stdio transport to a mounted server, reading its stdout in linear time.

The SDK's `stdio_client` joins its carry-over with each new chunk and splits the whole
string again, so one long line (a 30 MB result is one JSON-RPC line) costs time quadratic in
its length: 10 MB took 6 s, 30 MB 43 s. Here each chunk is searched for newlines alone and
the pieces of an unfinished line are kept in a list, joined once when the line ends. Starting
and stopping the process (spawn, close stdin, grace period, kill the tree) is the SDK's own.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TextIO

import anyio
from mcp import StdioServerParameters
from mcp.client import stdio as sdk_stdio
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

WRITER_FLUSH_SECONDS = 2.0

_running: set[int] = set()
"""The process groups of the mounted servers this process runs (each leads its own)."""


def kill_mounted_servers() -> None:
    """Kill every mounted server's process group now, without the grace period: a stop
    signal came while deftly was closing them, and whoever sent it may kill deftly next
    (the MCP SDK's client does, 2 s later), which would leave them running."""
    for group in list(_running):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


_LIFELINE = """\
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    os._exit(1)  # deftly died before the line was tied: nobody to serve
os.execv(sys.argv[2], sys.argv[3:])  # the program found on PATH, its argv as given
"""


def with_lifeline(
    command: str, args: Sequence[str], env: Mapping[str, str]
) -> tuple[str, list[str]]:
    """The server's command, started (on Linux) through a few lines of Python that ask the
    kernel to kill it when deftly dies, then become it (`execv`: same process, same pid).
    Without this, a deftly killed outright (SIGKILL, the OOM killer) would leave a server
    that ignores its closed stdin running for ever, in a session of its own. A command not
    found on PATH is passed as it is, for the SDK's usual error."""
    if not sys.platform.startswith("linux"):
        return command, list(args)
    found = shutil.which(command, path=env.get("PATH"))
    if found is None:
        return command, list(args)
    return sys.executable, ["-I", "-S", "-c", _LIFELINE, str(os.getpid()), found, command, *args]


class LineSplitter:
    """Bytes in, complete lines out; an unfinished line's pieces wait in a list (linear)."""

    def __init__(self, encoding: str = "utf-8", errors: str = "strict") -> None:
        self._decoder = codecs.getincrementaldecoder(encoding)(errors=errors)
        self._pending: list[str] = []

    def feed(self, data: bytes) -> list[str]:
        """The lines that `data` completes, without their newline."""
        text = self._decoder.decode(data)
        if "\n" not in text:
            if text:
                self._pending.append(text)
            return []
        pieces = text.split("\n")
        pieces[0] = "".join([*self._pending, pieces[0]])
        rest = pieces.pop()
        self._pending = [rest] if rest else []
        return pieces


@contextlib.asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: TextIO | None = None
) -> AsyncIterator[TransportStreams]:
    """Spawn the server and bridge its pipes to the session's streams (see the module)."""
    command = await sdk_stdio._get_executable_command(server.command)
    env = sdk_stdio.get_default_environment() | (server.env or {})
    command, args = with_lifeline(command, server.args, env)
    process = await sdk_stdio._create_platform_compatible_process(
        command=command,
        args=args,
        env=env,
        errlog=errlog if errlog is not None else sys.stderr,
        cwd=server.cwd,
    )
    _running.add(process.pid)  # the SDK starts it in a session of its own: pgid = pid
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    shutting_down = False

    async def stdout_reader() -> None:
        assert process.stdout is not None
        lines = LineSplitter(server.encoding, server.encoding_error_handler)
        try:
            async with read_writer:
                try:
                    while True:
                        try:
                            data = await process.stdout.receive()
                        except anyio.EndOfStream:
                            return
                        for line in lines.feed(data):
                            try:
                                await read_writer.send(sdk_stdio._parse_line(line))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                finally:
                    await sdk_stdio._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass
        except (anyio.BrokenResourceError, ConnectionError, UnicodeDecodeError):
            if not shutting_down:
                log.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    data = (json + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_SECONDS):
            await writer_done.wait()
        try:
            await sdk_stdio._stop_server_process(process)
        finally:
            _running.discard(process.pid)
        await sdk_stdio._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
