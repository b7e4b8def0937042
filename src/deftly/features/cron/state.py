"""The session's cron jobs, kept in the session store, and what the tools and scheduler
share: `CronService`, one per agent (only the main agent's holds jobs).

The jobs live under the store key `cron.jobs`, so a resumed session
(`Runtime(session_id=...)`) has them back and a new session starts with none.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from deftly.features.cron.clock import Clock
from deftly.features.cron.settings import CronSettings
from deftly.session.store import StateSlot

STATE_KEY = "cron.jobs"
MAIN_ONLY = (
    "Cron tools are only supported by the main agent: a sub-agent's run ends with its "
    "task. Report back to the main agent, which can schedule the job."
)


class CronJob(BaseModel):
    """One scheduled prompt. Times are epoch seconds."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    id: str = ""
    cron: str = ""
    prompt: str = ""
    created_at: float = 0.0
    recurring: bool = True
    last_fired_at: float | None = None
    """The ideal time of the last fire delivered (None: none yet); the next fire is the
    first one after it (or after `created_at`)."""

    @property
    def base(self) -> float:
        """The time the next fire is counted from."""
        return max(self.last_fired_at or 0.0, self.created_at)


class CronJobs(BaseModel):
    """What the session store keeps: the jobs, in the order they were created."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    jobs: list[CronJob] = []


class CronService:
    """One agent's view of the session's cron jobs (a service in its scope)."""

    def __init__(
        self,
        slot: StateSlot[CronJobs] | None,
        *,
        settings: CronSettings,
        clock: Clock,
    ) -> None:
        self._slot = slot
        self.settings = settings
        self.clock = clock

    @property
    def main(self) -> bool:
        """Whether this is the main agent's service (the only one that holds jobs)."""
        return self._slot is not None

    @property
    def jitter(self) -> bool:
        """Whether jobs fire off their ideal time (`[cron] no_jitter` unset)."""
        return not self.settings.no_jitter

    @property
    def problem(self) -> str | None:
        """Why the jobs could not be read back or saved, if they could not."""
        return self._slot.problem if self._slot is not None else None

    def jobs(self) -> list[CronJob]:
        """Every job, oldest first (copies)."""
        return list(self._slot.get().jobs) if self._slot is not None else []

    def count(self) -> int:
        """How many jobs there are."""
        return len(self.jobs())

    def add(self, job: CronJob) -> None:
        """Keep `job` (after the others)."""
        slot = self._require()
        slot.update(lambda state: state.model_copy(update={"jobs": [*state.jobs, job]}))

    def remove(self, job_id: str) -> bool:
        """Delete the job `job_id`; whether it was there (ids compare case-insensitively)."""
        slot = self._require()
        wanted = job_id.upper()
        found = False

        def drop(state: CronJobs) -> CronJobs:
            nonlocal found
            kept = [job for job in state.jobs if job.id.upper() != wanted]
            found = len(kept) != len(state.jobs)
            return state.model_copy(update={"jobs": kept})

        slot.update(drop)
        return found

    def fired(self, job_id: str, ideal: float) -> None:
        """Record that the fires of `job_id` up to the ideal time `ideal` were delivered."""
        slot = self._require()

        def advance(state: CronJobs) -> CronJobs:
            jobs = [
                job.model_copy(update={"last_fired_at": ideal}) if job.id == job_id else job
                for job in state.jobs
            ]
            return state.model_copy(update={"jobs": jobs})

        slot.update(advance)

    def _require(self) -> StateSlot[CronJobs]:
        if self._slot is None:
            raise RuntimeError(MAIN_ONLY)
        return self._slot
