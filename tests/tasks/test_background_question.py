"""AskUserQuestion with `background: true` (case 51 of the reference): a "question" task
on the session's board, answered while the model works on; its answer is the task's
output and its end notice; TaskStop withdraws it; WaitFor waits for it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from deftly import Runtime, ToolCall
from deftly.execution.notices import TASK_FINISHED_KIND
from deftly.features.ask.result import UNSUPPORTED
from deftly.session.questions import Answers, QuestionRequest, QuestionsUnsupported
from deftly.session.tasks import TaskBoard, TaskStatus
from tests.ask.helpers import DB, EXTRAS, TOOL, ask
from tests.shell.conftest import task_id_in

ANSWER = '{"answers":{"Which DB?":"Postgres"}}'


class Person:
    """An answerer who answers when the test says so (or never)."""

    def __init__(self, reply: Answers | None = None) -> None:
        self.reply = reply
        self.asked = asyncio.Event()
        self.go = asyncio.Event()
        self.withdrawn = asyncio.Event()
        self.requests: list[QuestionRequest] = []

    async def answer(self, request: QuestionRequest) -> Answers | None:
        self.requests.append(request)
        self.asked.set()
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.withdrawn.set()
            raise
        return self.reply


def background(*questions: dict[str, Any]) -> dict[str, Any]:
    return {**ask(*questions), "background": True}


async def _asked(make_runtime: Any, person: Person, *questions: dict[str, Any]) -> Any:
    runtime: Runtime = await make_runtime(answerer=person)
    called = await runtime.call(TOOL, background(*(questions or (DB,))))
    assert not called.is_error, called.result.text
    task = runtime.service(TaskBoard).get(task_id_in(called.result.text))
    assert task is not None
    return runtime, called, task


async def test_it_returns_a_question_task_at_once_and_the_answer_becomes_its_output(
    make_runtime: Any,
) -> None:
    person = Person({"Which DB?": "Postgres", "Which extras?": "Auth, Search"})
    runtime, called, task = await _asked(make_runtime, person, DB, EXTRAS)
    text = called.result.text
    assert text.startswith("task_id: question-")
    assert "description: Which DB? (+1 more)" in text and "status: running" in text
    assert called.description == "Starting a background question: Which DB? (+1 more)"
    assert task.kind == "question" and task.running

    await asyncio.wait_for(person.asked.wait(), 30)
    [request] = person.requests
    assert [q.question for q in request.questions] == ["Which DB?", "Which extras?"]
    listed = await runtime.call("TaskList", {})
    assert task.id in listed.result.text and "kind: question" in listed.result.text

    person.go.set()
    assert await task.wait(30)
    assert task.status is TaskStatus.COMPLETED
    output = await runtime.call("TaskOutput", {"task_id": task.id})
    assert "status: completed" in output.result.text
    [_, body] = output.result.text.split("[output]\n")
    assert json.loads(body) == {
        "answers": {"Which DB?": "Postgres", "Which extras?": "Auth, Search"}
    }


async def test_the_answer_is_told_to_the_model_once_on_its_next_result(
    make_runtime: Any,
) -> None:
    person = Person({"Which DB?": "Postgres"})
    runtime, _, task = await _asked(make_runtime, person)
    person.go.set()
    assert await task.wait(30)
    after = await runtime.call("Bash", {"command": "true"})
    note = after.result.note or ""
    assert f"The user responded to background question {task.id} (Which DB?): {ANSWER}" in note
    again = await runtime.call("Bash", {"command": "true"})
    assert task.id not in (again.result.note or "")


async def test_a_dismissed_question_completes_with_the_dismissal(make_runtime: Any) -> None:
    person = Person(None)
    _, _, task = await _asked(make_runtime, person)
    person.go.set()
    assert await task.wait(30)
    assert task.status is TaskStatus.COMPLETED
    assert '"answers":{}' in task.output(10_000).text and "dismissed" in task.output(10_000).text


async def test_task_stop_withdraws_the_questions(make_runtime: Any) -> None:
    person = Person({"Which DB?": "Postgres"})
    runtime, _, task = await _asked(make_runtime, person)
    await asyncio.wait_for(person.asked.wait(), 30)
    stopped = await runtime.call("TaskStop", {"task_id": task.id})
    assert not stopped.is_error, stopped.result.text
    assert stopped.result.text.startswith(f"Stopped task {task.id}.")
    assert "outcome: killed (stopped by TaskStop)" in stopped.result.text
    await asyncio.wait_for(person.withdrawn.wait(), 30)
    assert runtime.service(TaskBoard).pending_notices() == []


async def test_wait_for_waits_for_the_answer(make_runtime: Any) -> None:
    person = Person({"Which DB?": "Postgres"})
    runtime, _, task = await _asked(make_runtime, person)
    waiting = asyncio.ensure_future(runtime.call("WaitFor", {"task_ids": [task.id], "timeout": 60}))
    await asyncio.wait_for(person.asked.wait(), 30)
    person.go.set()
    waited = await asyncio.wait_for(waiting, 30)
    assert "wait_status: completed" in waited.result.text
    assert ANSWER in waited.result.text


async def test_a_client_that_cannot_be_asked_fails_the_task_with_the_reason(
    make_runtime: Any,
) -> None:
    class Unable:
        async def answer(self, request: QuestionRequest) -> Answers | None:
            raise QuestionsUnsupported("no forms here")

    runtime: Runtime = await make_runtime(answerer=Unable())
    called = await runtime.call(TOOL, background(DB))
    task = runtime.service(TaskBoard).get(task_id_in(called.result.text))
    assert task is not None and await task.wait(30)
    assert task.status is TaskStatus.FAILED
    after = await runtime.call("Bash", {"command": "true"})
    assert f"Background question {task.id} (Which DB?) failed: {UNSUPPORTED}" in (
        after.result.note or ""
    )


async def test_bad_questions_are_refused_at_once_and_no_task_is_posted(
    make_runtime: Any,
) -> None:
    person = Person()
    runtime: Runtime = await make_runtime(answerer=person)
    called = await runtime.call(TOOL, background(DB, DB))
    assert called.is_error and "unique" in called.result.text
    assert runtime.service(TaskBoard).entries() == [] and person.requests == []


async def test_without_the_task_tools_it_asks_to_be_called_in_the_foreground(
    make_runtime: Any,
) -> None:
    person = Person()
    runtime: Runtime = await make_runtime(
        answerer=person, config={"tools": {"disabled": ["TaskStop"]}}
    )
    called = await runtime.call(TOOL, background(DB))
    assert called.is_error and "without background" in called.result.text
    assert runtime.service(TaskBoard).entries() == [] and person.requests == []


async def test_closing_the_session_withdraws_an_open_question(make_runtime: Any) -> None:
    person = Person()
    runtime, _, task = await _asked(make_runtime, person)
    await asyncio.wait_for(person.asked.wait(), 30)
    await runtime.close()
    assert person.withdrawn.is_set()
    assert task.status is TaskStatus.KILLED


async def test_a_childs_question_is_answered_to_the_child(make_runtime: Any) -> None:
    person = Person({"Which DB?": "SQLite"})
    runtime: Runtime = await make_runtime(answerer=person)
    child = await runtime.agent.spawn_child("helper")
    [called] = await child.run_batch([ToolCall("q1", TOOL, background(DB))])
    assert not called.is_error, called.result.text
    task = runtime.service(TaskBoard).get(task_id_in(called.result.text))
    assert task is not None and task.owner == child.agent_id
    person.go.set()
    assert await task.wait(30)
    assert [i for i in runtime.agent.injections.drain() if i.kind == TASK_FINISHED_KIND] == []
    [told] = [i for i in child.injections.drain() if i.kind == TASK_FINISHED_KIND]
    assert '"Which DB?":"SQLite"' in told.text
