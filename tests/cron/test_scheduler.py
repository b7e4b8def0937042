"""The scheduler on a manual clock and a real inbox: a due job is delivered only while the
agent is idle, one message per job; fires missed while busy come as one message with their
count; a one-shot is deleted once delivered; a 7-day-old recurring job fires once more as
stale and is deleted; the loop ticks on its own and survives a failing round."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from deftly.features.cron import CronJob, CronScheduler, CronService, ManualClock
from deftly.features.cron.scheduler import fire_message
from deftly.features.cron.timing import Due
from tests.cron.helpers import Consumer, at, cron_runtime, job_id, scheduler, service

START = at(2024, 5, 1, 10, 0, 20)


async def create(runtime: Any, cron: str, prompt: str, recurring: bool = True) -> str:
    made = await runtime.call(
        "CronCreate", {"cron": cron, "prompt": prompt, "recurring": recurring}
    )
    assert not made.is_error, made.text
    return job_id(made.text)


async def test_a_due_job_is_delivered_only_while_the_agent_is_idle(make_runtime: Any) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    ident = await create(runtime, "* * * * *", "check the build")
    ticker = scheduler(runtime)
    assert ticker.tick() == 0  # nothing due yet
    clock.advance(60)  # 10:01:20, past 10:01 and its jitter (under 6 s)
    assert ticker.tick() == 0  # due, but no consumer waits: held
    assert len(runtime.agent.inbox) == 0
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    assert ticker.tick() == 1
    message = await consumer.received()
    assert message.text == (
        f'<cron-fire jobId="{ident}" cron="* * * * *" recurring="true" coalescedCount="1" '
        'stale="false">\n<prompt>\ncheck the build\n</prompt>\n</cron-fire>'
    )
    assert message.origin == {
        "kind": "cron_job",
        "job_id": ident,
        "cron": "* * * * *",
        "recurring": True,
        "coalesced_count": 1,
        "stale": False,
    }
    await consumer.wait()
    assert ticker.tick() == 0  # that fire was delivered; the next is at 10:02
    (job,) = service(runtime).jobs()
    assert job.last_fired_at == at(2024, 5, 1, 10, 1)
    await consumer.stop()


async def test_fires_held_while_busy_come_as_one_message_with_their_count(
    make_runtime: Any,
) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    await create(runtime, "* * * * *", "tick")
    ticker = scheduler(runtime)
    for _ in range(3):  # three minutes of a busy agent
        clock.advance(60)
        assert ticker.tick() == 0
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    assert ticker.tick() == 1
    message = await consumer.received()
    assert 'coalescedCount="3"' in message.text
    assert message.origin["coalesced_count"] == 3
    assert len(runtime.agent.inbox) == 0  # one message, not three
    listed = (await runtime.call("CronList", {})).text
    assert "nextFireAt: 2024-05-01T10:04:" in listed


async def test_a_one_shot_is_deleted_once_delivered(make_runtime: Any) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    await create(runtime, "5 10 * * *", "once", recurring=False)
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock.set(at(2024, 5, 1, 10, 4, 59))
    assert scheduler(runtime).tick() == 0
    clock.set(at(2024, 5, 1, 10, 5))  # not on :00/:30, so no jitter
    assert scheduler(runtime).tick() == 1
    message = await consumer.received()
    assert 'recurring="false" coalescedCount="1"' in message.text
    assert service(runtime).jobs() == []
    assert (await runtime.call("CronList", {})).text == "cron_jobs: 0\nNo cron jobs scheduled."


async def test_a_one_shot_on_the_hour_may_fire_a_little_early(make_runtime: Any) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    service(runtime).add(
        CronJob(id="80000000", cron="0 11 * * *", prompt="p", created_at=START, recurring=False)
    )
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock.set(at(2024, 5, 1, 10, 59, 14))
    assert scheduler(runtime).tick() == 0
    clock.set(at(2024, 5, 1, 10, 59, 15))  # 45 s early: half of 90 s for this id
    assert scheduler(runtime).tick() == 1
    await consumer.received()


async def test_a_week_old_recurring_job_fires_once_more_as_stale_then_goes(
    make_runtime: Any,
) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    jobs = service(runtime)
    week = 7 * 86_400
    jobs.add(
        CronJob(
            id="00000000",
            cron="*/10 * * * *",
            prompt="poll",
            created_at=START - week,
            last_fired_at=at(2024, 5, 1, 10, 0),
        )
    )
    young = CronJob(id="00000001", cron="*/10 * * * *", prompt="young", created_at=START - 60)
    jobs.add(young)
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock.set(at(2024, 5, 1, 10, 11))
    assert scheduler(runtime).tick() == 2  # one message per due job
    first = await consumer.received()
    second = runtime.agent.inbox.take()
    assert second is not None
    assert 'jobId="00000000"' in first.text and 'stale="true"' in first.text
    assert first.origin["stale"] is True
    assert 'jobId="00000001"' in second.text and 'stale="false"' in second.text
    assert [job.id for job in jobs.jobs()] == ["00000001"]


async def test_a_job_that_no_longer_parses_is_skipped_and_the_others_fire(
    make_runtime: Any, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock)
    jobs = service(runtime)
    jobs.add(CronJob(id="0000000b", cron="garbage", prompt="x", created_at=START))
    jobs.add(CronJob(id="0000000c", cron="* * * * *", prompt="y", created_at=START))
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock.advance(120)
    with caplog.at_level(logging.WARNING):
        assert scheduler(runtime).tick() == 1
    assert 'jobId="0000000c"' in (await consumer.received()).text
    assert "0000000b" in caplog.text
    assert len(jobs.jobs()) == 2


def test_the_envelope_escapes_its_attributes_and_keeps_the_prompt_verbatim() -> None:
    job = CronJob(
        id='a&"b', cron="* * * * *", prompt='line 1 & "two"\n<b>three</b>\n', created_at=0
    )
    message = fire_message(job, job.cron, Due(2, 0.0), stale=False)
    assert message.text.startswith('<cron-fire jobId="a&amp;&quot;b" cron="* * * * *" ')
    assert '\n<prompt>\nline 1 & "two"\n<b>three</b>\n\n</prompt>\n</cron-fire>' in message.text
    assert message.kind == "cron_job"


async def test_the_loop_fires_a_one_minute_job_into_an_idle_consumer(make_runtime: Any) -> None:
    clock = ManualClock(START)
    runtime = await cron_runtime(make_runtime, clock, cron={"poll_interval": 0.02})
    ident = await create(runtime, "* * * * *", "every minute")
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock.advance(60)  # a minute passes without anyone waiting for it
    message = await consumer.received(timeout=30)
    assert f'jobId="{ident}"' in message.text


class FailingOnce(ManualClock):
    """A clock whose first reading fails, as a broken clock file might."""

    def __init__(self, start: float) -> None:
        super().__init__(start)
        self.failed = False

    def now(self) -> float:
        if not self.failed:
            self.failed = True
            raise OSError("clock unreadable")
        return super().now()


async def test_a_failing_round_is_logged_and_the_loop_goes_on(
    make_runtime: Any, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FailingOnce(START)
    runtime = await cron_runtime(make_runtime, clock, cron={"poll_interval": 0.02})
    service(runtime).add(CronJob(id="0000000d", cron="* * * * *", prompt="z", created_at=START))
    clock.set(START + 60)
    consumer = Consumer(runtime.agent.inbox)
    with caplog.at_level(logging.ERROR):
        await consumer.wait()
        message = await consumer.received(timeout=30)
    assert 'jobId="0000000d"' in message.text
    assert clock.failed and "round failed" in caplog.text


async def test_the_scheduler_stops_when_the_runtime_closes(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(START), cron={"poll_interval": 0.02})
    task = scheduler(runtime)._task
    assert task is not None and not task.done()
    await runtime.close()
    assert task.done()


async def test_no_scheduler_when_cron_is_switched_off(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(START), cron={"enabled": False})
    assert runtime.agent.services.find(CronScheduler) is None


async def test_a_sub_agent_has_no_scheduler_and_no_jobs(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(START))
    await create(runtime, "0 9 * * *", "main's job")
    child = await runtime.agent.spawn_child("helper")
    assert child.services.find(CronScheduler) is None
    child_service = child.services.find(CronService)
    assert child_service is not None and not child_service.main and child_service.jobs() == []


async def test_the_clock_variable_drives_the_scheduler_through_a_file(
    make_runtime: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clock_file = tmp_path / "cron-clock"
    clock_file.write_text(f"{START}\n")
    monkeypatch.setenv("DEFTLY_CRON_CLOCK", f"file:{clock_file}")
    config = {"cron": {"poll_interval": 0.02}}
    runtime = await make_runtime(config=config)
    runtime.agent.inbox.attach()
    created = await create(runtime, "* * * * *", "from the file clock")
    assert service(runtime).jobs()[0].created_at == START  # the file's time, not the machine's
    consumer = Consumer(runtime.agent.inbox)
    await consumer.wait()
    clock_file.write_text(f"{int((START + 60) * 1000)}\n")  # milliseconds work too
    message = await consumer.received(timeout=30)
    assert f'jobId="{created}"' in message.text
