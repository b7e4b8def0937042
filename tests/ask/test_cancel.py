"""The call's cancel token withdraws the questions: the wait ends, the answerer's own wait
is cancelled, and the model is told the call was cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

from deftly.contract.tool import CancelToken
from deftly.session.questions import Answers, QuestionRequest
from tests.ask.helpers import DB, TOOL, ask


class Waiting:
    """An answerer that waits for a person who never answers."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.stopped = asyncio.Event()

    async def answer(self, request: QuestionRequest) -> Answers | None:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.stopped.set()
        return None


async def test_cancelling_the_call_withdraws_the_questions(make_runtime: Any) -> None:
    person = Waiting()
    runtime = await make_runtime(answerer=person)
    cancel = CancelToken()
    call = asyncio.create_task(runtime.call(TOOL, ask(DB), cancel=cancel))
    await asyncio.wait_for(person.asked.wait(), timeout=30)
    cancel.cancel("the user pressed Esc", by_user=True)
    called = await asyncio.wait_for(call, timeout=30)
    assert called.is_error
    assert "withdrawn" in called.result.text, called.result.text
    await asyncio.wait_for(person.stopped.wait(), timeout=30)


async def test_a_call_cancelled_before_it_runs_asks_nobody(make_runtime: Any) -> None:
    person = Waiting()
    runtime = await make_runtime(answerer=person)
    cancel = CancelToken()
    cancel.cancel("already stopped")
    called = await runtime.call(TOOL, ask(DB), cancel=cancel)
    assert called.is_error
    assert not person.asked.is_set()
