"""One agent's todo list and the step counts behind its stale reminder, in the session store.

The list lives in the session store under `todo.<agent id>`, so a resumed session
(`Runtime(session_id=...)`) has it back. Beside it the store keeps three step counts,
counted in model steps (one per model request of the agent loop): how many steps the agent
has taken, and at which step it last wrote the list and was last reminded of it. A resumed
session goes on counting from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from deftly.session.store import StateSlot

TodoStatus: TypeAlias = Literal["pending", "in_progress", "done"]
"""How far an item is: not started, being worked on, finished."""


class TodoEntry(BaseModel):
    """One item of the list as kept: what to do, and how far it is."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    title: str = ""
    status: TodoStatus = "pending"


class TodoState(BaseModel):
    """What the session store keeps for one agent's list."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    items: list[TodoEntry] = []
    steps: int = 0
    """Model steps the agent has finished so far (counted by the agent loop)."""
    written_at: int = 0
    """The step during which the list was last written (0: never)."""
    reminded_at: int = 0
    """How many steps were finished when the model was last reminded (0: never)."""


def state_key(agent_id: str) -> str:
    """The session-store key of `agent_id`'s list."""
    return f"todo.{agent_id}"


class TodoBook:
    """One agent's list and step counts: a service in the agent's scope, which the
    TodoList tool and the stale reminder share."""

    def __init__(self, slot: StateSlot[TodoState]) -> None:
        self._slot = slot
        self._state = slot.get()
        self._turn_base = self._state.steps
        """The steps finished before the current turn began."""

    @property
    def items(self) -> list[TodoEntry]:
        """The list now (a copy)."""
        return [item.model_copy() for item in self._state.items]

    @property
    def steps(self) -> int:
        """The model steps the agent has finished."""
        return self._state.steps

    @property
    def problem(self) -> str | None:
        """Why the list could not be read back or saved, if it could not."""
        return self._slot.problem

    def replace(self, items: Sequence[TodoEntry]) -> list[TodoEntry]:
        """Make `items` the whole list (empty: clear it), save it, and return it."""
        kept = [TodoEntry(title=item.title, status=item.status) for item in items]
        self._save(items=kept, written_at=self._state.steps + 1)
        return self.items

    # -- step counting (told by the agent loop) ----------------------------------------

    def turn_started(self) -> None:
        """A turn begins: its steps are counted from the steps finished so far."""
        self._turn_base = self._state.steps

    def steps_in_turn(self, steps: int) -> None:
        """The loop is about to take a step, with `steps` of this turn finished."""
        self._state.steps = self._turn_base + steps

    def turn_ended(self, steps: int) -> None:
        """A turn ended after `steps` steps: the count is saved."""
        self._state.steps = self._turn_base + steps
        self._turn_base = self._state.steps
        self._save()

    def steps_since_write(self) -> int:
        """Steps finished after the one that last wrote the list (all of them if none)."""
        return max(0, self._state.steps - self._state.written_at)

    def steps_since_reminder(self) -> int:
        """Steps finished since the model was last reminded (all of them if never)."""
        return max(0, self._state.steps - self._state.reminded_at)

    def reminded(self) -> None:
        """The model is being reminded now."""
        self._save(reminded_at=self._state.steps)

    def _save(self, **changes: object) -> None:
        self._state = self._state.model_copy(update=changes)
        self._slot.set(self._state)
