"""The stale-list reminder: after enough model steps without a TodoList write, the model is
reminded of its list.

Steps are *model steps* (one model request each, with or without tool calls), counted
through the agent loop's hooks: the `StepCounter` is a turn budget that never ends a turn
(the loop asks it before every step, with the steps of the turn so far) and a turn
listener (a turn's end saves the count). Without an agent loop no step is counted, and no
reminder is given.

The reminder is an injection source: when the loop drains the agent's injections before a
request, it yields the reminder if the tool is on for the agent and at least
`STEPS_SINCE_WRITE` steps went by since the last write and `STEPS_BETWEEN_REMINDERS` since
the last reminder.
"""

from __future__ import annotations

from collections.abc import Callable

from deftly.features.todo.render import reminder
from deftly.features.todo.state import TodoBook
from deftly.session.injections import Injection
from deftly.session.turns import TurnEnd, TurnStart, TurnUsage

REMINDER_KIND = "todo_reminder"
"""The injection kind of the reminder."""
STEPS_SINCE_WRITE = 10
"""Model steps after the last write before the model is reminded."""
STEPS_BETWEEN_REMINDERS = 10
"""Model steps between two reminders."""


class StepCounter:
    """Tells the `TodoBook` how many model steps the agent took (see the module docstring)."""

    def __init__(self, book: TodoBook) -> None:
        self.book = book

    def exceeded(self, *, steps: int, usage: TurnUsage, seconds: float) -> str | None:
        """Counts the steps finished before the next one; never ends the turn."""
        self.book.steps_in_turn(steps)
        return None

    def turn_started(self, event: TurnStart) -> None:
        """A turn begins."""
        self.book.turn_started()

    def turn_ended(self, event: TurnEnd) -> None:
        """A turn ended: save the count."""
        self.book.turn_ended(event.steps)


class StaleReminder:
    """The injection source of the reminder."""

    def __init__(self, book: TodoBook, active: Callable[[], bool]) -> None:
        self.book = book
        self.active = active
        """Whether the TodoList tool is on for this agent now."""

    def __call__(self) -> list[Injection]:
        """The reminder, when it is due (asked at each drain of the agent's injections)."""
        book = self.book
        if (
            book.steps_since_write() < STEPS_SINCE_WRITE
            or book.steps_since_reminder() < STEPS_BETWEEN_REMINDERS
            or not self.active()
        ):
            return []
        book.reminded()
        return [Injection(REMINDER_KIND, reminder(book.items))]
