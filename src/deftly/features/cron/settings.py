"""The `[cron]` config table."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section


class CronSettings(Section):
    """`[cron]`: whether cron jobs may be scheduled, and how the scheduler runs.

    ```toml
    [cron]
    enabled = true        # false: the cron tools refuse, nothing fires
    no_jitter = false     # true: every job fires at its ideal time
    poll_interval = 1.0   # seconds between the scheduler's looks at the clock; 0: never
                          # on its own (a host calls CronScheduler.tick())
    max_jobs = 50         # jobs one session may hold
    ```
    """

    enabled: bool = True
    no_jitter: bool = False
    poll_interval: float = Field(default=1.0, ge=0, le=3600)
    max_jobs: int = Field(default=50, ge=1, le=1000)
