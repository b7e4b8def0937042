"""Work a feature starts `alongside` (the shell's sandbox probe) runs while the later
features take their steps, and the runtime is ready only once it is done; a start that
fails cancels it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import pytest

from deftly import Runtime
from deftly.features import BUILTIN_FEATURES
from deftly.features.api import Feature, SessionContext


class _Prober(Feature):
    """Starts work that can end only once a later feature's step has run."""

    name: ClassVar[str] = "prober"

    def __init__(self, later_ran: asyncio.Event, log: list[str]) -> None:
        self.later_ran = later_ran
        self.started = asyncio.Event()
        self.log = log

    async def start_session(self, ctx: SessionContext) -> None:
        async def probe() -> None:
            self.started.set()
            try:
                await self.later_ran.wait()
                self.log.append("probe done")
            except asyncio.CancelledError:
                self.log.append("probe cancelled")
                raise

        ctx.alongside(probe())
        self.log.append("prober step done")


class _Later(Feature):
    name: ClassVar[str] = "later"

    def __init__(
        self, later_ran: asyncio.Event, log: list[str], fail_after: asyncio.Event | None = None
    ) -> None:
        self.later_ran = later_ran
        self.log = log
        self.fail_after = fail_after

    async def start_session(self, ctx: SessionContext) -> None:
        if self.fail_after is not None:
            await self.fail_after.wait()  # the probe is under way
            raise RuntimeError("the later step broke")
        self.log.append("later step done")
        self.later_ran.set()


async def test_the_work_overlaps_the_later_steps_and_ends_before_ready(tmp_path: Path) -> None:
    ran, log = asyncio.Event(), []
    features = [*BUILTIN_FEATURES, _Prober(ran, log), _Later(ran, log)]
    async with Runtime(tmp_path, config={}, plugins=False, features=features):
        # Had the prober's step waited for its probe, the later step could never run.
        assert log == ["prober step done", "later step done", "probe done"]


async def test_a_failed_start_cancels_the_work(tmp_path: Path) -> None:
    ran, log = asyncio.Event(), []
    prober = _Prober(ran, log)
    features = [*BUILTIN_FEATURES, prober, _Later(ran, log, fail_after=prober.started)]
    with pytest.raises(RuntimeError, match="the later step broke"):
        async with Runtime(tmp_path, config={}, plugins=False, features=features):
            pass
    assert log == ["prober step done", "probe cancelled"]
