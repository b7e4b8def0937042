"""Cron: CronCreate, CronList and CronDelete, the session's jobs in the session store, and
the scheduler that fires them into the main agent's inbox when it is idle.

The grammar is in `expression.py`, the words for a schedule in `human.py`, the per-job
jitter in `jitter.py`, the clocks (system, manual, `DEFTLY_CRON_CLOCK=file:<path>`) in
`clock.py`, the jobs in `state.py`, when they fire in `timing.py`, the firing loop in
`scheduler.py`.
"""

from __future__ import annotations

from deftly.features.cron.clock import (
    CLOCK_VARIABLE,
    Clock,
    FileClock,
    ManualClock,
    SystemClock,
    clock_from_env,
)
from deftly.features.cron.cron_create import CronCreateTool
from deftly.features.cron.cron_delete import CronDeleteTool
from deftly.features.cron.cron_list import CronListTool
from deftly.features.cron.expression import CronExpression, CronSyntaxError, parse
from deftly.features.cron.human import cron_to_human
from deftly.features.cron.scheduler import ORIGIN_KIND, CronScheduler
from deftly.features.cron.settings import CronSettings
from deftly.features.cron.state import CronJob, CronService
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(CronCreateTool),
    ToolContribution.of(CronListTool),
    ToolContribution.of(CronDeleteTool),
]

__all__ = [
    "CLOCK_VARIABLE",
    "CONTRIBUTIONS",
    "ORIGIN_KIND",
    "Clock",
    "CronCreateTool",
    "CronDeleteTool",
    "CronExpression",
    "CronJob",
    "CronListTool",
    "CronScheduler",
    "CronService",
    "CronSettings",
    "CronSyntaxError",
    "FileClock",
    "ManualClock",
    "SystemClock",
    "clock_from_env",
    "cron_to_human",
    "parse",
]
