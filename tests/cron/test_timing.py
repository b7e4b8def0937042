"""Which fires are due: a week of missed minutes is counted (up to 10 000) without
blocking the event loop for long."""

from __future__ import annotations

import time

from deftly.features.cron.expression import parse
from deftly.features.cron.state import CronJob
from deftly.features.cron.timing import MAX_COALESCED, due_fires, next_fire_at
from tests.cron.helpers import at

NOW = at(2024, 5, 8, 12, 0)


def test_missed_fires_are_counted_up_to_the_cap_quickly() -> None:
    expr = parse("* * * * *")
    job = CronJob(id="0000abcd", cron=expr.text, created_at=NOW - 8 * 86_400)
    began = time.perf_counter()
    due = due_fires(job, expr, NOW, jitter=True)
    spent = time.perf_counter() - began
    assert due is not None and due.count == MAX_COALESCED
    assert due.last_ideal == job.created_at - job.created_at % 60 + MAX_COALESCED * 60
    assert spent < 5  # one iterator walks them (about 0.3 s here; 9 s one croniter each)


def test_an_hour_of_missed_five_minute_fires_with_and_without_jitter() -> None:
    expr = parse("*/5 * * * *")
    job = CronJob(id="ffffffff", cron=expr.text, created_at=at(2024, 5, 8, 10, 59, 30))
    due = due_fires(job, expr, at(2024, 5, 8, 12, 0, 10), jitter=False)
    assert due is not None and (due.count, due.last_ideal) == (13, at(2024, 5, 8, 12, 0))
    # With jitter the 12:00 fire (nearly 30 s late for this id) is not due yet.
    late = due_fires(job, expr, at(2024, 5, 8, 12, 0, 10), jitter=True)
    assert late is not None and (late.count, late.last_ideal) == (12, at(2024, 5, 8, 11, 55))
    upcoming = next_fire_at(
        job.model_copy(update={"last_fired_at": late.last_ideal}), expr, jitter=True
    )
    assert upcoming is not None and at(2024, 5, 8, 12, 0, 29) < upcoming <= at(
        2024, 5, 8, 12, 0, 30
    )
