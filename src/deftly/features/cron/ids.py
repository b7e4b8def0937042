"""Cron job ids: ULIDs, made here (the format is small and fixed; no library needed).

A ULID is 26 characters of Crockford base32: 48 bits of milliseconds since the epoch, then
80 random bits. Ids sort by creation time and never collide in practice. CronDelete also
accepts the 8-hex-digit ids older sessions of other agents used.
"""

from __future__ import annotations

import re
import secrets

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
JOB_ID = re.compile(r"(?:[0-9a-f]{8}|[0-9A-HJKMNP-TV-Z]{26})", re.IGNORECASE)
"""What a job id looks like: a ULID, or a legacy 8-hex id."""


def new_job_id(now: float) -> str:
    """A fresh ULID whose time part is `now` (epoch seconds)."""
    value = (int(now * 1000) & (2**48 - 1)) << 80 | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_job_id(text: str) -> bool:
    """Whether `text` has the shape of a job id."""
    return JOB_ID.fullmatch(text) is not None
