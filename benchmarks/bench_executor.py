"""Executor overhead per call, and the scheduler's cost as batches grow.

1. A batch of 1,000 no-op calls through `Executor.run_batch` (preflight, validation,
   resolve, hooks, scheduling, normalisation, budget) against awaiting each call's
   `execute` directly. Target: at most 50 µs of overhead per call.
2. Scheduling n queued calls with random accesses (paths in a small tree, reads, writes,
   searches of directories, some undeclared): submit all, then let them finish in random
   order. Compared with the same number of bare asyncio tasks. Target: well under a second
   for 10,000, growing no faster than n log n.
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import EchoTool

from _common import best_of, clock, isolate, row
from deftly import Accesses, Runtime, ToolContext
from deftly.contract import Operation
from deftly.execution import Scheduler

CALLS = 1_000


def executor_overhead(workspace: Path) -> None:
    async def through_executor() -> float:
        async with Runtime(
            workspace, config={}, plugins=False, builtins=False, tools=[EchoTool]
        ) as rt:
            calls = [
                {"id": f"c{i}", "name": "Echo", "arguments": '{"text": "x"}'} for i in range(CALLS)
            ]
            await rt.run_batch(calls[:10])
            start = clock()
            await rt.run_batch(calls)
            return (clock() - start) / CALLS * 1e6

    async def direct() -> float:
        tool = EchoTool()
        args = tool.parse_args({"text": "x"})
        start = clock()
        for i in range(CALLS):
            execution = tool.resolve(args)
            execution.execute(ToolContext(f"c{i}"))
        return (clock() - start) / CALLS * 1e6

    async def bare_execute() -> float:
        tool = EchoTool()
        execution = tool.resolve(tool.parse_args({"text": "x"}))
        ctx = ToolContext("c")
        start = clock()
        for _ in range(CALLS):
            execution.execute(ctx)
        return (clock() - start) / CALLS * 1e6

    pipeline = best_of(5, lambda: asyncio.run(through_executor()))
    floor = best_of(5, lambda: asyncio.run(bare_execute()))
    resolved = best_of(5, lambda: asyncio.run(direct()))
    print(f"executor, batch of {CALLS:,} no-op calls (µs per call)")
    row("execute() called directly (floor)", floor, "µs")
    row("resolve() + execute() directly", resolved, "µs", floor)
    row("Executor.run_batch, whole pipeline", pipeline, "µs", floor)
    row("pipeline overhead per call", pipeline - floor, "µs", None, "target <= 50 µs")


DIRS = ["/repo", "/repo/src", "/repo/src/core", "/repo/tests", "/repo/docs"]


def random_accesses(rng: random.Random) -> Accesses | None:
    roll = rng.random()
    if roll < 0.02:
        return None
    if roll < 0.12:
        return Accesses.search_tree(rng.choice(DIRS))
    directory = rng.choice(DIRS)
    path = f"{directory}/f{rng.randrange(200)}.py"
    op = rng.choice([Operation.READ, Operation.READ, Operation.WRITE, Operation.READWRITE])
    return Accesses.file(op, path)


def schedule(n: int, seed: int = 7) -> float:
    async def scenario() -> float:
        rng = random.Random(seed)
        plan = [random_accesses(rng) for _ in range(n)]
        gate = asyncio.Event()
        scheduler = Scheduler()

        async def job() -> None:
            await gate.wait()

        start = clock()
        futures = [scheduler.submit(acc, job) for acc in plan]
        gate.set()
        await asyncio.gather(*futures)
        return clock() - start

    return asyncio.run(scenario())


def bare_tasks(n: int) -> float:
    async def scenario() -> float:
        gate = asyncio.Event()

        async def job() -> None:
            await gate.wait()

        start = clock()
        tasks = [asyncio.ensure_future(job()) for _ in range(n)]
        gate.set()
        await asyncio.gather(*tasks)
        return clock() - start

    return asyncio.run(scenario())


def scheduler_growth() -> None:
    print("scheduler, n queued calls with random accesses (seconds)")
    base = None
    for n in (1_000, 2_500, 5_000, 10_000, 20_000):
        took = best_of(3, lambda n=n: schedule(n))
        floor = best_of(3, lambda n=n: bare_tasks(n))
        if base is None:
            base = (n, took)
        growth = took / base[1]
        nlogn = (n * math.log(n)) / (base[0] * math.log(base[0]))
        row(
            f"n={n:>6,}  (x{growth:5.1f} time vs x{nlogn:5.1f} n log n)",
            took,
            "s",
            floor,
            "target < 1 s" if n == 10_000 else "",
        )


if __name__ == "__main__":
    isolate()
    executor_overhead(Path(__import__("tempfile").mkdtemp()))
    scheduler_growth()
