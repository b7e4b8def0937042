"""The cron scheduler: one per session, on the main agent, delivering due jobs to its inbox.

Every `poll_interval` seconds it reads the clock and, while the agent is idle (a consumer
waits on the inbox), puts one message per due job into the inbox: the job's prompt in a
`<cron-fire>` envelope. While the agent is busy (a turn running) or nothing consumes the
inbox, due jobs are held; when it is idle again each held job is delivered once, with the
number of fires it stands for (`coalescedCount`). A one-shot job is deleted once delivered;
a recurring job that is 7 days old is delivered once more marked `stale="true"` and then
deleted (re-create it to keep it). `tick()` does one round, for tests and hosts that drive
the clock themselves. Nothing raises out of the loop: a failing round is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from deftly.features.cron.expression import CronSyntaxError, parse
from deftly.features.cron.state import CronJob, CronService
from deftly.features.cron.timing import Due, due_fires, is_stale, next_fire_at
from deftly.session.inbox import Inbox, InboxMessage

log = logging.getLogger(__name__)

ORIGIN_KIND = "cron_job"


class CronScheduler:
    """Fires the session's cron jobs into the main agent's inbox (see the module docstring)."""

    def __init__(self, service: CronService, inbox: Inbox, poll_interval: float) -> None:
        self.service = service
        self.inbox = inbox
        self.poll_interval = poll_interval
        self._task: asyncio.Task[None] | None = None
        self._broken: set[str] = set()
        self._upcoming: dict[str, tuple[tuple[str, float, bool], float | None]] = {}
        """Each job's next fire as last computed, with what it was computed from (its
        expression, base and kind): a round skips jobs not yet due without croniter."""

    def start(self) -> None:
        """Start ticking every `poll_interval` seconds (never, when it is 0)."""
        if self._task is None and self.poll_interval > 0:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="deftly cron scheduler"
            )

    async def stop(self) -> None:
        """Stop ticking (held jobs stay in the session for the next start)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                self.tick()
            except Exception:
                log.exception("the cron scheduler's round failed; it goes on at the next tick")

    def tick(self) -> int:
        """One round: deliver every due job if the agent is idle; returns how many were."""
        if not self.service.settings.enabled or not self.inbox.idle:
            return 0
        jobs = self.service.jobs()
        if not jobs:
            return 0
        now = self.service.clock.now()
        delivered = 0
        for job in jobs:
            try:
                delivered += self._fire(job, now)
            except Exception:
                log.exception("cron job %s could not be fired", job.id)
        kept = {job.id for job in jobs}
        self._upcoming = {k: v for k, v in self._upcoming.items() if k in kept}
        return delivered

    def _fire(self, job: CronJob, now: float) -> int:
        key = (job.cron, job.base, job.recurring)
        known = self._upcoming.get(job.id)
        if known is not None and known[0] == key and (known[1] is None or now < known[1]):
            return 0
        try:
            expr = parse(job.cron)
        except CronSyntaxError as exc:
            if job.id not in self._broken:
                self._broken.add(job.id)
                log.warning("cron job %s has an expression that does not parse: %s", job.id, exc)
            return 0
        upcoming = next_fire_at(job, expr, jitter=self.service.jitter)
        self._upcoming[job.id] = (key, upcoming)
        if upcoming is None or now < upcoming:
            return 0
        due = due_fires(job, expr, now, jitter=self.service.jitter)
        if due is None:
            return 0
        stale = is_stale(job, now)
        self.inbox.put(fire_message(job, expr.text, due, stale=stale))
        if not job.recurring or stale:
            self.service.remove(job.id)
        else:
            self.service.fired(job.id, due.last_ideal)
        return 1


def fire_message(job: CronJob, cron: str, due: Due, *, stale: bool) -> InboxMessage:
    """The inbox message of one delivery: the prompt, verbatim, in a `<cron-fire>` envelope
    whose attributes say which job it is and how many fires it stands for."""
    recurring = "true" if job.recurring else "false"
    stale_text = "true" if stale else "false"
    text = (
        f'<cron-fire jobId="{_attr(job.id)}" cron="{_attr(cron)}" recurring="{recurring}" '
        f'coalescedCount="{due.count}" stale="{stale_text}">\n'
        f"<prompt>\n{job.prompt}\n</prompt>\n</cron-fire>"
    )
    origin = {
        "kind": ORIGIN_KIND,
        "job_id": job.id,
        "cron": cron,
        "recurring": job.recurring,
        "coalesced_count": due.count,
        "stale": stale,
    }
    return InboxMessage(text=text, origin=origin)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")
