"""Cron jobs live in the session store: a new Runtime on the same session id (what
`deftly run --resume` opens) lists them and fires them; a new session has none."""

from __future__ import annotations

import json
from pathlib import Path

from deftly import Runtime
from deftly.features.cron import ManualClock
from tests.cron.helpers import Consumer, at, features, job_id, scheduler

START = at(2024, 5, 1, 10, 0, 20)


def runtime(workspace: Path, clock: ManualClock, session_id: str | None = None) -> Runtime:
    return Runtime(
        workspace,
        features=features(clock),
        plugins=False,
        approve_asks=True,
        session_id=session_id,
        config={"cron": {"poll_interval": 0}},
    )


async def test_jobs_survive_a_restart_of_the_session_and_fire_there(workspace: Path) -> None:
    clock = ManualClock(START)
    async with runtime(workspace, clock) as rt:
        rt.agent.inbox.attach()
        made = await rt.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "look again"})
        assert not made.is_error
        ident = job_id(made.text)
        session_id = rt.session_id
        kept = rt.session_dir / "state" / "cron.jobs.json"
    assert kept.is_file()
    assert json.loads(kept.read_text())["jobs"][0]["id"] == ident
    clock.set(at(2024, 5, 1, 10, 6))  # the 10:05 fire passed while the session was closed
    async with runtime(workspace, clock, session_id) as rt:
        rt.agent.inbox.attach()
        listed = (await rt.call("CronList", {})).text
        assert listed.startswith("cron_jobs: 1\n") and f"id: {ident}" in listed
        assert "nextFireAt: 2024-05-01T10:05:" in listed  # due, not yet delivered
        consumer = Consumer(rt.agent.inbox)
        await consumer.wait()
        assert scheduler(rt).tick() == 1
        message = await consumer.received()
        assert f'jobId="{ident}"' in message.text and 'coalescedCount="1"' in message.text
    async with runtime(workspace, clock, session_id) as rt:
        rt.agent.inbox.attach()
        listed = (await rt.call("CronList", {})).text
        assert "nextFireAt: 2024-05-01T10:10:" in listed  # the delivered fire is remembered
    async with runtime(workspace, clock) as fresh:
        fresh.agent.inbox.attach()
        assert (await fresh.call("CronList", {})).text == "cron_jobs: 0\nNo cron jobs scheduled."
