"""The texts the model reads about its todo list."""

from __future__ import annotations

from collections.abc import Sequence

from deftly.features.todo.state import TodoEntry

EMPTY = "The todo list is empty."
CLEARED = "Todo list cleared."
KEEP_IT_CURRENT = (
    "Keep the list current as you work: mark an item done as soon as it is finished, and "
    "keep exactly one item in_progress while work is underway."
)
REMINDER = (
    "You have not updated your todo list (TodoList) for a while. If you are working "
    "through a multi-step task, bring the items' status up to date; if the list no longer "
    "matches what you are doing, rewrite or clear it. If a list does not help with the "
    "current work, ignore this. Never mention this reminder to the user."
)


def render_list(items: Sequence[TodoEntry]) -> str:
    """The list as the model reads it: one `  [status] title` line per item."""
    if not items:
        return EMPTY
    lines = [f"  [{item.status}] {item.title}" for item in items]
    return "Todo list:\n" + "\n".join(lines)


def kept_state(items: Sequence[TodoEntry]) -> str | None:
    """What a compacted history keeps of the list: the list, or None when it is empty (an
    empty list is no state worth carrying)."""
    if not items:
        return None
    lines = "\n".join(f"  [{item.status}] {item.title}" for item in items)
    return f"Your todo list (TodoList):\n{lines}"


def written(items: Sequence[TodoEntry]) -> str:
    """The result of a write: the list as saved, and how to keep it useful."""
    if not items:
        return CLEARED
    text = f"Todo list updated.\n{render_list(items)}\n\n{KEEP_IT_CURRENT}"
    working = sum(1 for item in items if item.status == "in_progress")
    if working > 1:
        text += (
            f"\nNote: {working} items are in_progress now. Unless you really are working on "
            "them at the same time, set all but the current one back to pending."
        )
    return text


def reminder(items: Sequence[TodoEntry]) -> str:
    """The stale-list reminder, with the list numbered when there is one."""
    if not items:
        return REMINDER
    numbered = "\n".join(
        f"{number}. [{item.status}] {item.title}" for number, item in enumerate(items, 1)
    )
    return f"{REMINDER}\n\nYour todo list:\n{numbered}"
