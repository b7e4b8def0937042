"""Running a swarm's children through the backend: at most `limit` at once, launched in
entry order, each with its own cancel token.

A child that fails (or whose backend raises) is that child's outcome; the others go on.
Cancelling the swarm cancels every running child's token (the backend stops its turn, and
with it the child's processes) and launches nothing more; the swarm then waits for the
running children to report, so their outcomes (completed, failed or stopped) are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from deftly.contract.tool import CancelToken
from deftly.session.subagents import ChildBackend, ChildOutcome, ChildSpec

log = logging.getLogger(__name__)

Finished = Callable[[int, ChildOutcome], None]
"""Told as each child ends: its index and outcome (for progress)."""


async def run_children(
    backend: ChildBackend,
    specs: Sequence[ChildSpec],
    *,
    limit: int,
    cancel: CancelToken,
    finished: Finished | None = None,
) -> list[ChildOutcome | None]:
    """Each spec's outcome, in the order given; None for a child never launched (the
    swarm was cancelled first)."""
    outcomes: list[ChildOutcome | None] = [None] * len(specs)
    tokens = [CancelToken() for _ in specs]
    upcoming = iter(range(len(specs)))

    async def worker() -> None:
        for index in upcoming:  # shared: each worker takes the next entry in order
            if cancel.cancelled:
                return
            outcome = await _run_one(backend, specs[index], tokens[index])
            outcomes[index] = outcome
            if finished is not None:
                finished(index, outcome)

    relay = asyncio.ensure_future(_pass_on(cancel, tokens))
    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(limit, len(specs))))]
    try:
        await asyncio.gather(*workers)
    finally:
        relay.cancel()
        for task in workers:
            task.cancel()
        for task in workers:
            with contextlib.suppress(BaseException):
                await task
    return outcomes


async def _run_one(backend: ChildBackend, spec: ChildSpec, token: CancelToken) -> ChildOutcome:
    """The child's outcome; a backend that raises fails this child only."""
    try:
        return await backend.run(spec, token)
    except Exception as exc:
        log.warning("the sub-agent backend failed for %s: %s", spec.agent_id, exc)
        log.debug("the backend's failure", exc_info=True)
        text = str(exc).strip() or type(exc).__name__
        return ChildOutcome(
            spec.agent_id,
            spec.profile.name,
            "failed",
            error=f"The sub-agent could not run: {text}.",
        )


async def _pass_on(cancel: CancelToken, tokens: Sequence[CancelToken]) -> None:
    """The swarm was cancelled: so is every child (for the same reason, by the same
    person)."""
    await cancel.wait()
    for token in tokens:
        token.cancel(cancel.reason or "the swarm was cancelled", by_user=cancel.by_user)
