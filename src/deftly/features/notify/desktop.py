"""Desktop notifications through `notify-send`, where it is installed and a desktop session
is there to show them (a display or a session bus is set).

Spawn and forget, never blocking the caller: each `notify-send` runs as an asyncio
subprocess with a timeout (killed past it), and `aclose()` reaps those still running, so
no process outlives the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Mapping

from deftly.features.notify.notification import Notification

log = logging.getLogger(__name__)

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
"""Any of these set means a desktop session may show a notification."""
TIMEOUT_SECONDS = 10.0
"""A notify-send still running after this (no notification daemon answering) is killed."""
CLOSE_GRACE_SECONDS = 1.0
"""How long closing waits for notifications just sent before killing them."""

_URGENCY = {"low": "low", "normal": "normal", "high": "critical"}


class DesktopNotifier:
    """Sends notifications with one `notify-send` program."""

    def __init__(self, program: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.program = program
        self.timeout = timeout
        self._running: set[asyncio.Task[None]] = set()

    @classmethod
    def find(cls, environ: Mapping[str, str] | None = None) -> DesktopNotifier | None:
        """A notifier when `notify-send` is on PATH and a display is set, else None."""
        env = os.environ if environ is None else environ
        if not any(env.get(name) for name in DISPLAY_VARIABLES):
            return None
        program = shutil.which("notify-send", path=env.get("PATH"))
        return cls(program) if program else None

    def command(self, note: Notification) -> list[str]:
        """The notify-send command line for `note` (`--` so a message is never an option)."""
        return [
            self.program,
            f"--urgency={_URGENCY[note.urgency]}",
            "--app-name=deftly",
            "--",
            note.title or "deftly",
            note.message,
        ]

    def send(self, note: Notification) -> bool:
        """Start showing `note` without waiting; False when there is no event loop to run
        the program on (nothing was started)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        task = loop.create_task(self._run(self.command(note)))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return True

    async def _run(self, argv: list[str]) -> None:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.debug("could not start %s: %s", argv[0], exc)
            return
        try:
            async with asyncio.timeout(self.timeout):
                await process.wait()
        except TimeoutError:
            log.debug("%s did not finish in %.0f s; killed", argv[0], self.timeout)
            await _kill(process)
            return
        except asyncio.CancelledError:
            await _kill(process)
            raise
        if process.returncode:
            log.debug("%s exited with %s", argv[0], process.returncode)

    async def aclose(self, grace: float = CLOSE_GRACE_SECONDS) -> None:
        """Give notifications just sent `grace` seconds to show, then kill and reap the
        rest."""
        running = set(self._running)
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill `process` and reap it (even if the waiting task is being cancelled)."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await asyncio.shield(process.wait())
