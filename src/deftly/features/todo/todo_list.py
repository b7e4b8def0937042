"""TodoList: read, replace or clear the agent's todo list."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import TodoItem, TodoListDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.todo.render import render_list, written
from deftly.features.todo.state import TodoBook, TodoEntry, TodoStatus


class TodoItemParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, description="A short, actionable description of the item.")
    status: TodoStatus = Field(description="pending, in_progress or done.")


class TodoListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    todos: list[TodoItemParam] | None = Field(
        None,
        description=(
            "The whole new list, replacing the current one. Omit it to read the list; "
            "pass [] to clear it."
        ),
    )


class TodoListTool(Tool[TodoListParams]):
    """Keeps the agent's own todo list (in the session store: a resumed session has it).

    Read-only as the guards see it: it touches no file and nothing outside the agent's own
    bookkeeping, so manual mode runs it unasked and plan mode lets it run.
    """

    name = "TodoList"
    title = "Update the to-do list"
    description = describe("todo_list.md")
    params = TodoListParams
    traits = ToolTraits(read_only=True, idempotent=True)

    def __init__(self, book: TodoBook) -> None:
        self.book = book

    def resolve(self, args: TodoListParams) -> ToolExecution:
        """Read, clear or replace: said in the description, shown as the list."""
        todos = args.todos
        if todos is None:
            return ToolExecution(
                accesses=Accesses.none(),
                description="Reading the todo list",
                approval_rule=self.name,
                display=_display(self.book.items),
                execute=self._read,
            )
        items = [TodoEntry(title=item.title, status=item.status) for item in todos]

        def write(ctx: ToolContext) -> ToolResult:
            return self._write(items)

        return ToolExecution(
            accesses=Accesses.none(),
            description="Clearing the todo list" if not items else "Updating the todo list",
            approval_rule=self.name,
            display=_display(items),
            execute=write,
        )

    def _read(self, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(render_list(self.book.items))

    def _write(self, items: list[TodoEntry]) -> ToolResult:
        kept = self.book.replace(items)
        text = written(kept)
        problem = self.book.problem
        if problem:
            text += f"\nWarning: {problem}."
        return ToolResult.ok(text)


def _display(items: list[TodoEntry]) -> TodoListDisplay:
    return TodoListDisplay(items=[TodoItem(title=i.title, status=i.status) for i in items])
