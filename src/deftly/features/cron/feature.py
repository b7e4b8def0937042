"""The cron feature: the `[cron]` table, the jobs, the three tools and the scheduler.

Agent step: a `CronService` in every agent's scope (the tools take it by type); only the
main agent's holds the session's jobs (store key `cron.jobs`), a sub-agent's refuses every
cron call. For the main agent, while cron is enabled, a `CronScheduler` (also in its scope)
ticks every `poll_interval` seconds, firing due jobs into the agent's inbox; it stops when
the agent closes.

The clock is the one given to `CronFeature(clock=...)` (a `ManualClock` in tests), else
the one `DEFTLY_CRON_CLOCK` names, else the system clock.
"""

from __future__ import annotations

from typing import ClassVar

from deftly.config.base import Section
from deftly.contract.identity import MAIN_AGENT
from deftly.features.api import AgentContext, Feature
from deftly.features.cron import CONTRIBUTIONS
from deftly.features.cron.clock import Clock, clock_from_env
from deftly.features.cron.scheduler import CronScheduler
from deftly.features.cron.settings import CronSettings
from deftly.features.cron.state import STATE_KEY, CronJobs, CronService
from deftly.registry.contribution import ToolContribution


class CronFeature(Feature):
    """Scheduled prompts for the session's main agent."""

    name: ClassVar[str] = "cron"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS
    config_tables: ClassVar[dict[str, type[Section]]] = {"cron": CronSettings}

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock

    async def start_agent(self, ctx: AgentContext) -> None:
        settings = ctx.session.config.section(CronSettings)
        clock = self.clock or clock_from_env()
        main = ctx.agent_id == MAIN_AGENT
        slot = ctx.session.store.slot(STATE_KEY, CronJobs) if main else None
        service = CronService(slot, settings=settings, clock=clock)
        ctx.services.provide(service)
        if not main or not settings.enabled:
            return
        scheduler = CronScheduler(service, ctx.inbox, settings.poll_interval)
        ctx.services.provide(scheduler)
        scheduler.start()
        ctx.on_close(scheduler.stop)


FEATURE = CronFeature()
