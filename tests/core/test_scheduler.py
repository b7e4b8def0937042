"""The scheduler against the reference's cases, and against a naive model of its rule."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.contract.accesses import Accesses, Operation
from deftly.execution.scheduler import Scheduler


@dataclass(eq=False)
class Probe:
    """A job whose start and end the test controls."""

    name: str
    accesses: Accesses | None
    release: asyncio.Event = field(default_factory=asyncio.Event)
    started: bool = False
    fail: bool = False

    async def run(self) -> str:
        self.started = True
        await self.release.wait()
        if self.fail:
            raise RuntimeError(f"{self.name} failed")
        return self.name


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def started(probes: list[Probe]) -> list[str]:
    return [p.name for p in probes if p.started]


async def submit_all(scheduler: Scheduler, probes: list[Probe]) -> list[asyncio.Future[str]]:
    futures = [scheduler.submit(p.accesses, p.run) for p in probes]
    await settle()
    return futures


async def test_reads_of_one_file_run_together() -> None:
    probes = [
        Probe("r1", Accesses.read_file("/repo/a.ts")),
        Probe("r2", Accesses.read_file("/repo/a.ts")),
    ]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["r1", "r2"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (Accesses.write_file("/repo/a.ts"), Accesses.read_file("/repo/a.ts")),
        (Accesses.write_file("C:\\Repo\\a.ts"), Accesses.read_file("c:/repo/A.ts")),
        (Accesses.read_tree("/repo/src"), Accesses.write_file("/repo/src/a.ts")),
        (Accesses.write_file("/repo/src/a.ts"), Accesses.search_tree("/repo")),
    ],
)
async def test_conflicting_calls_are_serialised(first: Accesses, second: Accesses) -> None:
    probes = [Probe("first", first), Probe("second", second)]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["first"]
    probes[0].release.set()
    await settle()
    assert started(probes) == ["first", "second"]


async def test_independent_calls_run_together() -> None:
    probes = [
        Probe("w", Accesses.write_file("/repo/a.ts")),
        Probe("r", Accesses.read_file("/repo/b.ts")),
    ]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["w", "r"]


async def test_later_independent_work_overtakes_blocked_work() -> None:
    probes = [
        Probe("w1", Accesses.write_file("/a")),
        Probe("w2", Accesses.write_file("/a")),
        Probe("reader", Accesses.read_file("/b")),
    ]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["w1", "reader"]
    probes[0].release.set()
    await settle()
    assert started(probes) == ["w1", "w2", "reader"]


async def test_undeclared_accesses_run_alone_and_keep_order() -> None:
    probes = [
        Probe("writer", Accesses.write_file("/a")),
        Probe("exclusive", None),
        Probe("reader", Accesses.read_file("/b")),
    ]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["writer"]
    probes[0].release.set()
    await settle()
    assert started(probes) == ["writer", "exclusive"]
    probes[1].release.set()
    await settle()
    assert started(probes) == ["writer", "exclusive", "reader"]


async def test_accesses_none_conflicts_with_nothing() -> None:
    probes = [Probe("exclusive", None), Probe("free", Accesses.none())]
    await submit_all(Scheduler(), probes)
    assert started(probes) == ["exclusive", "free"]


async def test_a_failed_job_still_releases_its_accesses() -> None:
    probes = [
        Probe("writer", Accesses.write_file("/a"), fail=True),
        Probe("reader", Accesses.read_file("/a")),
    ]
    futures = await submit_all(Scheduler(), probes)
    probes[0].release.set()
    await settle()
    assert started(probes) == ["writer", "reader"]
    with pytest.raises(RuntimeError):
        await futures[0]
    probes[1].release.set()
    assert await futures[1] == "reader"


# -- the property: the real scheduler behaves like the naive rule, step by step ------------

PATHS = ["/r", "/r/a", "/R/A", "/r/b", "/r/d", "/r/d/x", "/r/d/x/y", "/s"]
OPS = list(Operation)


def accesses_strategy() -> st.SearchStrategy[Accesses | None]:
    one = st.builds(
        lambda op, path, recursive: Accesses.file(op, path, recursive=recursive),
        st.sampled_from(OPS),
        st.sampled_from(PATHS),
        st.booleans(),
    )
    declared = st.lists(one, min_size=1, max_size=3).map(
        lambda items: Accesses(tuple(a for acc in items for a in acc.items))
    )
    return st.one_of(st.none(), st.just(Accesses.none()), declared, declared, declared)


def conflict(a: Accesses | None, b: Accesses | None) -> bool:
    if (a is not None and not a.items) or (b is not None and not b.items):
        return False
    return (a or Accesses.all()).conflicts_with(b or Accesses.all())


class NaiveModel:
    """The reference's rule, literally: blocked by any active or queued-ahead conflict."""

    def __init__(self) -> None:
        self.active: list[int] = []
        self.queue: list[int] = []
        self.accesses: dict[int, Accesses | None] = {}

    def blocked(self, i: int, ahead: list[int]) -> bool:
        acc = self.accesses[i]
        return any(conflict(acc, self.accesses[j]) for j in self.active + ahead)

    def add(self, i: int, acc: Accesses | None) -> None:
        self.accesses[i] = acc
        if self.blocked(i, self.queue):
            self.queue.append(i)
        else:
            self.active.append(i)

    def finish(self, i: int) -> None:
        self.active.remove(i)
        index = 0
        while index < len(self.queue):
            candidate = self.queue[index]
            if not self.blocked(candidate, self.queue[:index]):
                self.queue.pop(index)
                self.active.append(candidate)
            else:
                index += 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.lists(accesses_strategy(), min_size=1, max_size=12),
    choices=st.lists(st.integers(min_value=0, max_value=10_000), min_size=40, max_size=40),
)
def test_scheduler_matches_the_naive_rule(jobs: list[Accesses | None], choices: list[int]) -> None:
    async def scenario() -> None:
        scheduler = Scheduler()
        model = NaiveModel()
        probes: list[Probe] = []
        futures: list[asyncio.Future[str]] = []
        submitted = 0
        choice = iter(choices * 10)
        running_count = 0
        while submitted < len(jobs) or any(not f.done() for f in futures):
            running = [i for i, p in enumerate(probes) if p.started and not p.release.is_set()]
            submit_next = submitted < len(jobs) and (not running or next(choice) % 2 == 0)
            if submit_next:
                probe = Probe(str(submitted), jobs[submitted])
                probes.append(probe)
                futures.append(scheduler.submit(probe.accesses, probe.run))
                model.add(submitted, jobs[submitted])
                submitted += 1
            else:
                victim = running[next(choice) % len(running)]
                probes[victim].release.set()
                model.finish(victim)
            await settle()
            actual = sorted(i for i, p in enumerate(probes) if p.started and not futures[i].done())
            actual_running = sorted(
                i for i, p in enumerate(probes) if p.started and not p.release.is_set()
            )
            assert actual_running == sorted(model.active), (actual, model.active, jobs)
            running_count = max(running_count, len(actual_running))
            for i in actual_running:
                for j in actual_running:
                    if i < j:
                        assert not conflict(jobs[i], jobs[j]), (
                            "conflicting jobs ran together",
                            i,
                            j,
                        )
        assert all(f.result() == str(i) for i, f in enumerate(futures))
        assert scheduler.pending == 0

    asyncio.run(scenario())
