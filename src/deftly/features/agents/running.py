"""The background sub-agent runs of one agent: started by Agent, stopped by TaskStop (via
their task) or when the agent's scope closes, so no run outlives its agent."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from deftly.contract.tool import CancelToken


class BackgroundRuns:
    """Runs by task id: each an asyncio task and the token that stops its child."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[asyncio.Task[None], CancelToken]] = {}

    def start(self, task_id: str, work: Coroutine[Any, Any, None], token: CancelToken) -> None:
        """Run `work` now, in the background."""
        run = asyncio.ensure_future(work)
        self._runs[task_id] = (run, token)
        run.add_done_callback(lambda _: self._runs.pop(task_id, None))

    async def stop(self, task_id: str, reason: str) -> None:
        """Stop one run's child (its turn is cancelled) and wait for the run to end."""
        found = self._runs.get(task_id)
        if found is None:
            return
        run, token = found
        token.cancel(reason or "stopped")
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(run)

    async def close(self) -> None:
        """Stop every run (the agent's scope closes)."""
        for task_id in list(self._runs):
            await self.stop(task_id, "the agent closed")

    @property
    def running(self) -> int:
        """How many runs are still going."""
        return len(self._runs)
