"""TodoList through the runtime: the reference's cases (§24), validation, how the call is
resolved, shown and allowed."""

from __future__ import annotations

import json
from typing import Any

from deftly.contract.accesses import Accesses
from deftly.contract.display import TodoItem, TodoListDisplay
from deftly.execution.calls import ToolCall
from deftly.execution.events import ToolCallStarted
from deftly.features.todo.todo_list import TodoListParams, TodoListTool
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.todo.helpers import FIRST_TWO, todo_runtime

UPDATED = (
    "Todo list updated.\n"
    "Todo list:\n"
    "  [pending] first\n"
    "  [in_progress] second\n\n"
    "Keep the list current as you work: mark an item done as soon as it is finished, and "
    "keep exactly one item in_progress while work is underway."
)


async def test_a_write_shows_the_list_and_asks_for_one_item_in_progress(
    make_runtime: Any,
) -> None:
    rt = await todo_runtime(make_runtime)
    result = await rt.call("TodoList", {"todos": FIRST_TWO})
    assert (result.is_error, result.text) == (False, UPDATED)


async def test_reading_shows_what_was_written(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    await rt.call("TodoList", {"todos": [{"title": "shipped", "status": "done"}]})
    result = await rt.call("TodoList", {})
    assert not result.is_error
    assert "[done] shipped" in result.text
    assert result.text == "Todo list:\n  [done] shipped"


async def test_an_empty_list_clears_it(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    await rt.call("TodoList", {"todos": FIRST_TWO})
    cleared = await rt.call("TodoList", {"todos": []})
    assert (cleared.is_error, cleared.text) == (False, "Todo list cleared.")
    assert (await rt.call("TodoList", {})).text == "The todo list is empty."


async def test_reading_an_empty_list(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    result = await rt.call("TodoList", {})
    assert (result.is_error, result.text) == (False, "The todo list is empty.")


async def test_a_write_replaces_the_whole_list(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    await rt.call("TodoList", {"todos": FIRST_TWO})
    await rt.call("TodoList", {"todos": [{"title": "third", "status": "pending"}]})
    assert (await rt.call("TodoList", {})).text == "Todo list:\n  [pending] third"


async def test_an_unknown_status_is_refused_and_the_list_is_kept(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    await rt.call("TodoList", {"todos": FIRST_TWO})
    refused = await rt.call("TodoList", {"todos": [{"title": "x", "status": "wip"}]})
    assert refused.is_error
    assert "status" in refused.text and "wip" in refused.text
    assert "in_progress" in refused.text  # what it may be
    assert "[in_progress] second" in (await rt.call("TodoList", {})).text


async def test_an_empty_title_a_missing_field_and_an_extra_key_are_refused(
    make_runtime: Any,
) -> None:
    rt = await todo_runtime(make_runtime)
    bad = [
        [{"title": "", "status": "pending"}],
        [{"title": "no status"}],
        [{"status": "done"}],
        [{"title": "a", "status": "done", "priority": 1}],
        "not a list",
    ]
    for todos in bad:
        result = await rt.call("TodoList", {"todos": todos})
        assert result.is_error, todos
        assert "TodoList" in result.text and "call it again" in result.text
    other = await rt.call("TodoList", {"items": []})
    assert other.is_error and "items" in other.text
    assert (await rt.call("TodoList", {})).text == "The todo list is empty."


async def test_two_items_in_progress_are_kept_with_a_note(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    both = [{"title": "a", "status": "in_progress"}, {"title": "b", "status": "in_progress"}]
    result = await rt.call("TodoList", {"todos": both})
    assert not result.is_error
    assert "2 items are in_progress" in result.text
    assert "[in_progress] b" in (await rt.call("TodoList", {})).text
    one = await rt.call("TodoList", {"todos": FIRST_TWO})
    assert "Note:" not in one.text


async def test_resolve_says_what_the_call_does(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    entry = rt.registry.get("TodoList")
    assert entry is not None and isinstance(entry.tool, TodoListTool)
    tool = entry.tool
    cases = {
        "Reading the todo list": TodoListParams(),
        "Clearing the todo list": TodoListParams(todos=[]),
        "Updating the todo list": TodoListParams.model_validate({"todos": FIRST_TWO}),
    }
    for description, args in cases.items():
        execution = tool.resolve(args)
        assert execution.description == description
        assert execution.approval_rule == "TodoList"
        assert execution.accesses == Accesses.none()
    assert tool.traits.read_only and not tool.traits.writes_files


async def test_every_call_is_shown_as_the_list(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    shown: list[tuple[str | None, object]] = []

    def watch(event: object) -> None:
        if isinstance(event, ToolCallStarted) and event.name == "TodoList":
            shown.append((event.description, event.display))

    rt.subscribe(watch)
    await rt.call("TodoList", {"todos": FIRST_TWO})
    await rt.call("TodoList", {})
    await rt.call("TodoList", {"todos": []})
    items = [
        TodoItem(title="first", status="pending"),
        TodoItem(title="second", status="in_progress"),
    ]
    assert shown == [
        ("Updating the todo list", TodoListDisplay(items=items)),
        ("Reading the todo list", TodoListDisplay(items=items)),
        ("Clearing the todo list", TodoListDisplay(items=[])),
    ]
    assert shown[0][1].model_dump()["kind"] == "todo_list"  # type: ignore[union-attr]


class CountingApprover:
    """Refuses every ask, counting them."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked.append(request.tool)
        return ApprovalResponse("reject")


async def test_manual_mode_runs_it_without_asking(make_runtime: Any) -> None:
    approver = CountingApprover()
    rt = await todo_runtime(make_runtime, approve_asks=False, approver=approver)
    result = await rt.call("TodoList", {"todos": FIRST_TWO})
    assert not result.is_error, result.text
    assert approver.asked == []


async def test_plan_mode_lets_it_run(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    assert not (await rt.call("EnterPlanMode", {})).is_error
    result = await rt.call("TodoList", {"todos": FIRST_TWO})
    assert (result.is_error, result.text) == (False, UPDATED)


async def test_the_description_says_how_to_read_clear_and_replace(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    [info] = [t for t in rt.tools() if t.name == "TodoList"]
    text = info.description
    assert "`todos: []` clears" in text and "plan file" in text
    assert "exactly one item `in_progress`" in text


async def test_each_agent_keeps_its_own_list(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    await rt.call("TodoList", {"todos": FIRST_TWO})
    child = await rt.agent.spawn_child("helper")
    call = ToolCall("c1", "TodoList", json.dumps({}))
    [read] = await child.run_batch([call])
    assert read.result.text == "The todo list is empty."
    write = ToolCall("c2", "TodoList", json.dumps({"todos": [{"title": "x", "status": "done"}]}))
    await child.run_batch([write])
    assert (await rt.call("TodoList", {})).text.endswith("[in_progress] second")
    state = rt.session_dir / "state"
    assert {p.name for p in state.glob("todo.*.json")} == {"todo.main.json", "todo.helper.json"}


async def test_a_read_after_a_write_in_one_batch_sees_the_write(make_runtime: Any) -> None:
    rt = await todo_runtime(make_runtime)
    write = ToolCall("w", "TodoList", json.dumps({"todos": FIRST_TWO}))
    read = ToolCall("r", "TodoList", "{}")
    results = await rt.run_batch([write, read])
    assert [r.result.text for r in results][
        1
    ] == "Todo list:\n  [pending] first\n  [in_progress] second"
