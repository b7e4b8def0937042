"""The todo list tool: TodoList (the list and its step counts in `state.py`, the stale
reminder in `reminder.py`)."""

from __future__ import annotations

from deftly.features.todo.reminder import REMINDER_KIND, StaleReminder, StepCounter
from deftly.features.todo.state import TodoBook, TodoEntry, TodoState
from deftly.features.todo.todo_list import TodoListTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [ToolContribution.of(TodoListTool)]

__all__ = [
    "CONTRIBUTIONS",
    "REMINDER_KIND",
    "StaleReminder",
    "StepCounter",
    "TodoBook",
    "TodoEntry",
    "TodoListTool",
    "TodoState",
]
