"""Questions asked in the background: each one a "question" task on the session's board.

The call that asks returns at once with the task's id; the asking goes on here, so the
model works on while the person thinks. When the person responds (or dismisses the
questions) the task completes with the answer JSON as its output, and the agent that asked
hears the answer itself as its task notice. TaskStop withdraws the questions; closing the
session withdraws every question still open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from deftly.contract.result import ToolResult
from deftly.session.tasks import TaskBoard, TaskStatus, TextTask

log = logging.getLogger(__name__)

KIND = "question"
Asking = Callable[[], Awaitable[ToolResult]]
"""Puts the questions to the person and gives the result the model reads."""


class BackgroundQuestions:
    """The session's open background questions and their asking."""

    def __init__(self, board: TaskBoard) -> None:
        self.board = board
        self._asking: dict[str, asyncio.Task[None]] = {}

    def start(self, description: str, owner: str, asking: Asking) -> TextTask:
        """Post a question task for `owner` (an agent id) and start asking."""

        async def withdraw(reason: str) -> None:
            """TaskStop: stop asking (`TextTask.stop` then ends the task as killed)."""
            runner = self._asking.get(task.id)
            if runner is not None:
                await _cancelled(runner)

        task = TextTask(self.board, KIND, description, owner=owner, stopper=withdraw)
        runner = asyncio.ensure_future(self._run(task, asking))
        self._asking[task.id] = runner
        runner.add_done_callback(lambda _: self._asking.pop(task.id, None))
        return task

    async def _run(self, task: TextTask, asking: Asking) -> None:
        try:
            result = await asking()
        except asyncio.CancelledError:
            return  # withdrawn: the one who withdrew it finishes the task
        except Exception as exc:  # asking already turns failures into results; be safe
            log.warning("a background question failed: %s", exc)
            task.write(f"The questions could not be asked: {exc}\n")
            task.finish(TaskStatus.FAILED, str(exc))
            return
        text = result.text
        task.write(text)
        if result.is_error:
            message = f"Background question {task.id} ({task.description}) failed: {text}"
            task.finish(TaskStatus.FAILED, "the questions could not be asked", message=message)
            return
        message = f"The user responded to background question {task.id} ({task.description}): "
        task.finish(TaskStatus.COMPLETED, message=message + text)

    async def close(self) -> None:
        """Withdraw every open question (the session is closing: nobody is told)."""
        runners = list(self._asking.items())
        for task_id, runner in runners:
            task = self.board.get(task_id)
            if task is not None:
                task.reported = True
            runner.cancel()
        for task_id, runner in runners:
            await _cancelled(runner)
            task = self.board.get(task_id)
            if isinstance(task, TextTask):
                task.finish(TaskStatus.KILLED, "the session closed")


async def _cancelled(runner: asyncio.Task[None]) -> None:
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await runner
