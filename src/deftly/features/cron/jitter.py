"""Jitter: each job fires a little off its ideal time, by an amount fixed by its id.

Many sessions asking for "0 9 * * *" would otherwise all wake the model at once. The offset
is deterministic (the same job always fires at the same offset, so a schedule is
predictable and testable) and bounded:

- a recurring job fires *later*, by up to a tenth of its period and never more than
  15 minutes (`*/5` at most 30 s late, a daily job at most 15 min);
- a one-shot job whose ideal time is on the hour or the half hour (the times people pick
  when they mean "about then") fires *earlier*, by up to 90 s, but never before it was
  created; other one-shots fire on time.

`[cron] no_jitter = true` turns it off: every job fires at its ideal time.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from deftly.features.cron.expression import DAY, CronExpression
from deftly.features.cron.zone import local_zone

RECURRING_CAP = 15 * 60.0
"""The longest a recurring job is delayed (seconds)."""
RECURRING_SHARE = 0.1
"""The largest delay as a share of the job's period."""
ONE_SHOT_LEAD = 90.0
"""The most a one-shot on :00 or :30 fires early (seconds)."""

_LEGACY_ID = re.compile(r"[0-9a-fA-F]{8}")


def fraction(job_id: str) -> float:
    """Where in its window a job fires, in [0, 1): an 8-hex id read as a number over 2^32,
    any other id (a ULID) a djb2 hash of its UTF-16 code units over 2^32."""
    if _LEGACY_ID.fullmatch(job_id):
        return int(job_id, 16) / 2**32
    h = 5381
    data = job_id.encode("utf-16-le")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h = (h * 33 + unit) & 0xFFFFFFFF
    return h / 2**32


def jittered(
    expr: CronExpression,
    ideal: float,
    *,
    job_id: str,
    recurring: bool,
    created_at: float,
    enabled: bool = True,
    zone: tzinfo | None = None,
    following: float | None = None,
) -> float:
    """When a job whose ideal fire is `ideal` really fires (epoch seconds). `following`:
    the ideal fire after it, when the caller knows it (else it is computed)."""
    if not enabled:
        return ideal
    share = fraction(job_id)
    if recurring:
        after = following if following is not None else expr.next_fire(ideal, zone=zone)
        period = after - ideal if after is not None else DAY
        return ideal + min(RECURRING_SHARE * period, RECURRING_CAP) * share
    local = datetime.fromtimestamp(ideal, zone or local_zone())
    if local.second or local.microsecond or local.minute not in (0, 30):
        return ideal
    early = ideal - ONE_SHOT_LEAD * share
    return ideal if early < created_at else early
