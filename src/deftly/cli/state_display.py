"""How the agent's own state reads in a terminal: a `todo_list` display as a checklist, a
`goal_start` display as the goal and how to tell it is reached.

Plain lines, shared by the print renderer (stderr lines) and the rich renderers (which
colour the same marks). `ListMemory` keeps a renderer from printing the same list twice in
a row: a read after a write shows only its summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from deftly.contract.display import GoalStartDisplay, TodoItem, TodoListDisplay

MARKS: dict[str, str] = {"pending": "☐", "in_progress": "▶", "done": "☑"}
"""The checklist mark of each status (an unknown status reads as pending)."""
STATUS_WORDS: dict[str, str] = {"done": "done", "in_progress": "in progress", "pending": "pending"}
"""How each status is said in a list's summary, in the summary's order."""


def mark(status: str) -> str:
    """The checklist mark of `status`."""
    return MARKS.get(status, MARKS["pending"])


def checklist(items: Sequence[TodoItem]) -> list[str]:
    """One `☑ title` line per item; `(the list is empty)` for none."""
    if not items:
        return ["(the list is empty)"]
    return [f"{mark(item.status)} {item.title}" for item in items]


def todo_summary(display: TodoListDisplay) -> str:
    """`3 items: 1 done, 1 in progress, 1 pending`, or `empty`."""
    items = display.items
    if not items:
        return "empty"
    counts = {status: 0 for status in STATUS_WORDS}
    for item in items:
        counts[item.status if item.status in counts else "pending"] += 1
    said = [f"{count} {STATUS_WORDS[status]}" for status, count in counts.items() if count]
    noun = "item" if len(items) == 1 else "items"
    return f"{len(items)} {noun}: {', '.join(said)}"


def goal_detail(display: GoalStartDisplay) -> str | None:
    """`done when: ...`, when the goal says how to tell it is reached."""
    criterion = display.completion_criterion
    return f"done when: {criterion}" if criterion else None


class ListMemory:
    """The last todo list a renderer showed, so an unchanged list is not shown again."""

    def __init__(self) -> None:
        self._shown: tuple[TodoItem, ...] | None = None

    def is_new(self, display: TodoListDisplay) -> bool:
        """Whether `display` differs from the list shown last (and remember it)."""
        items = tuple(display.items)
        if items == self._shown:
            return False
        self._shown = items
        return True
