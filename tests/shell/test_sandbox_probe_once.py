"""The sandbox probe answers once, and while it runs nothing is started unconfined: a
command that comes meanwhile waits for the same probe (the probe runs beside the other
features' start-up steps). The bubblewrap run itself is held back here by an event, to
make the window observable; the real probe is exercised by test_sandbox.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deftly.config.shell import ShellConfig
from deftly.env import LocalEnv
from deftly.features.shell.launch import Sandbox

PROBLEM = "bubblewrap could not start (held back by the test)"


class _HeldProbe(Sandbox):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.release = asyncio.Event()
        self.probes = 0

    async def _probe(self) -> str | None:
        self.probes += 1
        await self.release.wait()
        return PROBLEM


@pytest.mark.parametrize("mode", ["auto", "bwrap"])
async def test_callers_during_the_probe_share_it_and_nothing_runs_unconfined(
    tmp_path: Path, mode: str
) -> None:
    box = _HeldProbe(LocalEnv(), ShellConfig(sandbox=mode))
    first = asyncio.ensure_future(box.check())
    second = asyncio.ensure_future(box.check())
    await asyncio.sleep(0)  # both are waiting on the probe now
    assert not box.checked
    with pytest.raises(RuntimeError):
        box.wrap(["true"], tmp_path, [])
    box.release.set()
    assert await first == await second == PROBLEM
    assert box.probes == 1
    assert await box.check() == PROBLEM  # answered once, remembered
    if mode == "auto":
        assert box.wrap(["true"], tmp_path, []) == ["true"]  # unconfined, as reported
    else:
        with pytest.raises(RuntimeError, match="held back"):
            box.wrap(["true"], tmp_path, [])
