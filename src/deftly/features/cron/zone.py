"""The local time zone cron expressions are read in, found afresh when `TZ` changes.

Python has no standard "local `ZoneInfo`": `datetime.astimezone()` gives a fixed offset,
which is wrong across a DST change. This module finds a real zone: the `TZ` variable (a
zone name or a zone file), else `/etc/localtime`, else the fixed offset of now (a machine
without zone data, where DST cannot be known anyway).
"""

from __future__ import annotations

import functools
import logging
import os
from datetime import datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

log = logging.getLogger(__name__)

LOCALTIME = Path("/etc/localtime")


def local_zone() -> tzinfo:
    """This process's local time zone (DST-aware whenever zone data exists)."""
    return _zone_for(os.environ.get("TZ"))


@functools.lru_cache(maxsize=8)
def _zone_for(tz: str | None) -> tzinfo:
    if tz:
        name = tz.removeprefix(":")
        try:
            if name.startswith("/"):
                with open(name, "rb") as file:
                    return ZoneInfo.from_file(file, key=name)
            return ZoneInfo(name)
        except (OSError, ValueError, ZoneInfoNotFoundError):
            log.debug("TZ=%r is not a zone this machine knows; using the system zone", tz)
    try:
        with LOCALTIME.open("rb") as file:
            return ZoneInfo.from_file(file, key="localtime")
    except (OSError, ValueError):
        pass
    fixed = datetime.now().astimezone().tzinfo
    assert fixed is not None  # astimezone() always sets one
    return fixed
