"""When a job fires next, and which of its fires are due: shared by CronList, CronCreate's
answer and the scheduler, so what the model is told is what happens."""

from __future__ import annotations

from datetime import datetime, tzinfo

from deftly.contract.records import frozen
from deftly.features.cron.expression import DAY, CronExpression
from deftly.features.cron.jitter import jittered
from deftly.features.cron.state import CronJob
from deftly.features.cron.zone import local_zone

STALE_AFTER = 7 * DAY
"""A recurring job this old fires once more, marked stale, and is deleted."""
MAX_COALESCED = 10_000
"""The most missed fires counted into one delivery."""


@frozen
class Due:
    """The fires of one job that are due now: how many, and the ideal time of the last."""

    count: int
    last_ideal: float


def next_fire_at(
    job: CronJob, expr: CronExpression, *, jitter: bool, zone: tzinfo | None = None
) -> float | None:
    """When `job` fires next (after its last delivered fire, jitter included), or None."""
    ideal = expr.next_fire(job.base, zone=zone)
    return None if ideal is None else _real(job, expr, ideal, jitter, zone)


def due_fires(
    job: CronJob, expr: CronExpression, now: float, *, jitter: bool, zone: tzinfo | None = None
) -> Due | None:
    """The fires of `job` that have fallen due by `now` and were not delivered, or None."""
    ideal = expr.next_fire(job.base, zone=zone)
    if ideal is None or _real(job, expr, ideal, jitter, zone) > now:
        return None
    if not job.recurring:
        return Due(1, ideal)
    # Walk the fires with one iterator (a week of minutes is 10 000 of them).
    ideals = expr.fires(job.base, zone=zone)
    current = next(ideals, None)
    count, last = 0, ideal
    while current is not None and count < MAX_COALESCED:
        following = next(ideals, None)
        if _real(job, expr, current, jitter, zone, following) > now:
            break
        count, last = count + 1, current
        current = following
    return Due(max(count, 1), last)


def is_stale(job: CronJob, now: float) -> bool:
    """Whether a recurring job has lived long enough to be retired."""
    return job.recurring and now - job.created_at >= STALE_AFTER


def local_iso(when: float, zone: tzinfo | None = None) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm±HH:MM` in local time."""
    return datetime.fromtimestamp(when, zone or local_zone()).isoformat(timespec="milliseconds")


def _real(
    job: CronJob,
    expr: CronExpression,
    ideal: float,
    jitter: bool,
    zone: tzinfo | None,
    following: float | None = None,
) -> float:
    return jittered(
        expr,
        ideal,
        job_id=job.id,
        recurring=job.recurring,
        created_at=job.created_at,
        enabled=jitter,
        zone=zone,
        following=following,
    )
