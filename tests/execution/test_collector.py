"""While batches are open the collector's young threshold is raised, so a batch's live
calls do not set off collections over the whole heap; the last batch to close puts the
threshold back, and a host's own setting always wins."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.execution.collector import OLD_THRESHOLD, YOUNG_THRESHOLD, BatchRoom


@pytest.fixture(autouse=True)
def _threshold_kept() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_first_batch_raises_and_the_last_restores() -> None:
    room = BatchRoom()
    room.enter()
    room.enter()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, OLD_THRESHOLD)
    room.leave()
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # one batch still open
    room.leave()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_host_that_changed_the_threshold_meanwhile_keeps_its_setting() -> None:
    room = BatchRoom()
    room.enter()
    gc.set_threshold(5_000, 20, 20)
    room.leave()
    assert gc.get_threshold() == (5_000, 20, 20)


@pytest.mark.parametrize("young", [0, 50_000])
def test_an_off_or_roomier_collector_is_left_alone(young: int) -> None:
    gc.set_threshold(young, 10, 10)
    room = BatchRoom()
    room.enter()
    assert gc.get_threshold() == (young, 10, 10)
    room.leave()
    assert gc.get_threshold() == (young, 10, 10)


async def test_the_first_large_batch_after_start_runs_without_a_full_collection(
    tmp_path: Path,
) -> None:
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text(f"line {i}\n")
    calls = [
        {"id": f"c{i}", "name": "Read", "arguments": {"path": f"f{i % 50}.txt"}}
        for i in range(1000)
    ]
    collections = [0, 0, 0]

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections[info["generation"]] += 1

    async with Runtime(tmp_path, config={}, plugins=False, approve_asks=True) as rt:
        await rt.run_batch(calls[:10])
        gc.callbacks.append(count)  # the start's own objects are due a full collection
        try:
            results = await rt.run_batch(calls)
        finally:
            gc.callbacks.remove(count)
        assert gc.get_threshold() == (700, 10, 10)  # put back once the batch is done
    assert all(not r.result.is_error for r in results)
    # At the default threshold this batch sets off some 60 young collections and full ones.
    assert collections[2] == 0, collections
    assert collections[0] <= 6, collections


async def test_a_batch_dropped_unfinished_gives_its_room_back(tmp_path: Path) -> None:
    async with Runtime(tmp_path, config={}, plugins=False, approve_asks=True) as rt:
        batch = rt.agent.executor.open_batch()
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        batch.seal()
        await asyncio.sleep(0)  # let its worker see the seal and end
        del batch
        gc.collect()
        assert gc.get_threshold() == (700, 10, 10)
