"""The clock the cron scheduler reads: the system's, one a test moves by hand, or a file.

Every reading is epoch seconds (a float). The scheduler asks at every tick, so a clock that
moves makes jobs fall due without anyone waiting a minute.

`DEFTLY_CRON_CLOCK=file:<path>` makes a `deftly` process read its cron clock from a file,
so a test can drive a separate `deftly run`: the file's first line is the time in **epoch
seconds** (a decimal number such as `1767225600` or `1767225600.5`; a value above 10^11 is
taken as epoch milliseconds, the unit other agents write). The file is read afresh at
every tick; while it is missing or unreadable the last good reading stands (the system
time until there is one).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

CLOCK_VARIABLE = "DEFTLY_CRON_CLOCK"
FILE_PREFIX = "file:"
MILLISECONDS_ABOVE = 1e11
"""A file reading larger than this is in milliseconds (10^11 s is the year 5138)."""


class Clock(Protocol):
    """Now, in epoch seconds."""

    def now(self) -> float:
        """The time now, in epoch seconds."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> float:
        """`time.time()`."""
        return time.time()


class ManualClock:
    """A clock that moves only when told (tests)."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start

    def now(self) -> float:
        """The time it was last set to."""
        return self._now

    def set(self, when: float) -> None:
        """Jump to `when` (epoch seconds)."""
        self._now = when

    def advance(self, seconds: float) -> float:
        """Move forward by `seconds`; returns the new time."""
        self._now += seconds
        return self._now


class FileClock:
    """The time written on the first line of a file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last: float | None = None
        self._warned = False

    def now(self) -> float:
        """The file's time, read now (the last good one when it cannot be read)."""
        try:
            first = self.path.read_text(encoding="utf-8").splitlines()[0]
            value = float(first.strip())
        except (OSError, UnicodeDecodeError, IndexError, ValueError) as exc:
            if not self._warned:
                self._warned = True
                log.warning(
                    "the cron clock file %s has no readable time (%s); write epoch seconds on "
                    "its first line",
                    self.path,
                    exc,
                )
            return self._last if self._last is not None else time.time()
        self._warned = False
        self._last = value / 1000 if value > MILLISECONDS_ABOVE else value
        return self._last


def clock_from_env(environ: Mapping[str, str] | None = None) -> Clock:
    """The clock `DEFTLY_CRON_CLOCK` asks for (`file:<path>`), else the system clock."""
    setting = (os.environ if environ is None else environ).get(CLOCK_VARIABLE, "").strip()
    if not setting:
        return SystemClock()
    if setting.startswith(FILE_PREFIX) and setting[len(FILE_PREFIX) :]:
        return FileClock(Path(setting[len(FILE_PREFIX) :]).expanduser())
    log.warning(
        '%s=%r is not understood (write "file:<path>"); cron uses the system clock',
        CLOCK_VARIABLE,
        setting,
    )
    return SystemClock()
