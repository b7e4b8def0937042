"""A runtime with the cron feature on a manual clock, and an idle consumer of its inbox."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from deftly.features import BUILTIN_FEATURES
from deftly.features.cron import CronScheduler, CronService, ManualClock
from deftly.features.cron.feature import CronFeature
from deftly.session.inbox import Inbox, InboxMessage
from tests.cron.conftest import ZONE

BERLIN = ZoneInfo(ZONE)


def at(*fields: int) -> float:
    """Epoch seconds of a Berlin wall-clock time (year, month, day, hour, minute...)."""
    return datetime(*fields, tzinfo=BERLIN).timestamp()  # type: ignore[arg-type, misc]


def local(when: float) -> datetime:
    return datetime.fromtimestamp(when, BERLIN)


def features(clock: ManualClock) -> list[Any]:
    """The built-in features, with cron on `clock`."""
    return [CronFeature(clock=clock) if isinstance(f, CronFeature) else f for f in BUILTIN_FEATURES]


async def cron_runtime(
    make_runtime: Callable[..., Any],
    clock: ManualClock,
    *,
    attach: bool = True,
    cron: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A started runtime with cron on `clock`, the scheduler ticked by hand (poll interval
    0) unless `cron` says otherwise, and its inbox consumed (so the tools are offered)."""
    config = kwargs.pop("config", {})
    config = {**config, "cron": {"poll_interval": 0, **(cron or {})}}
    runtime = await make_runtime(features=features(clock), config=config, **kwargs)
    if attach:
        runtime.agent.inbox.attach()
    return runtime


def scheduler(runtime: Any) -> CronScheduler:
    found = runtime.agent.services.find(CronScheduler)
    assert found is not None
    return found


def service(runtime: Any) -> CronService:
    found = runtime.agent.services.find(CronService)
    assert found is not None
    return found


class Consumer:
    """Waits on an inbox as a driving loop does (making the agent idle), one get at a time."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox
        self.task: asyncio.Task[InboxMessage] | None = None

    async def wait(self) -> None:
        """Start waiting, and return once the inbox counts as idle."""
        self.task = asyncio.create_task(self.inbox.get())
        while not self.inbox.idle:
            await asyncio.sleep(0)

    async def received(self, timeout: float = 30) -> InboxMessage:
        assert self.task is not None
        return await asyncio.wait_for(self.task, timeout)

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


def job_id(created: str) -> str:
    """The id in a CronCreate answer."""
    first = created.splitlines()[0]
    assert first.startswith("id: ")
    return first.removeprefix("id: ")
