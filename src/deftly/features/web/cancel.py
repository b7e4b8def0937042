"""Stopping a request the moment its batch is cancelled (the executor otherwise waits a
grace period before it cancels a call that does not watch its token)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from deftly.contract.result import ToolResult
from deftly.contract.tool import CancelToken


async def until_cancelled(
    work: Coroutine[Any, Any, ToolResult], cancel: CancelToken, what: str
) -> ToolResult:
    """`work`'s result, or an error saying `what` was cancelled once `cancel` fires (the
    work is cancelled then, its connection closed)."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled():
        return ToolResult.error(f"{what} was cancelled before it finished.")
    return task.result()
