"""What the keys do to one question at the terminal, apart from how it is drawn.

A `Picker` is the state of one question: the cursor over its options and the "Other"
entry that always follows them, the options ticked (multi-select), whether the person is
typing their own answer, and how the question ended. `run_question.py` draws it and feeds
it keys; keeping the logic here lets it be tested without a terminal.

The keys: Up/Down (or k/j) move the cursor, wrapping round. Enter chooses the option under
the cursor (single choice) or confirms the ticked ones (multi-select; with none ticked,
the one under the cursor). Space ticks or unticks (multi-select; in a single choice it is
Enter). On "Other", Enter or Space opens a line for the person's own words: Enter there
answers with them (in multi-select, beside the ticked options), an empty line or Esc goes
back to the list. Esc at the list dismisses the question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from deftly.session.questions import OTHER_LABEL, Question


class Key(Enum):
    """The keys a picker understands (the text line's own editing keys are not here)."""

    UP = "up"
    DOWN = "down"
    TOGGLE = "toggle"
    ENTER = "enter"
    ESCAPE = "escape"


@dataclass(frozen=True, slots=True)
class Answered:
    """The question's answer: a label, labels joined by ", ", or the person's own words."""

    text: str


@dataclass(frozen=True, slots=True)
class Dismissed:
    """The person dismissed the question (and so the whole request)."""


Outcome = Answered | Dismissed

ANSWER_SEPARATOR = ", "
"""Between the labels of a multi-select answer (as `deftly.session.questions.Answers` says)."""


@dataclass(slots=True)
class Picker:
    """One question's state, changed only by `press` and `submit_text`."""

    question: Question
    cursor: int = 0
    ticked: set[int] = field(default_factory=set)
    """Indexes of the options ticked (never the "Other" entry)."""
    typing: bool = False
    """The line for the person's own answer is open."""
    outcome: Outcome | None = None

    @property
    def entries(self) -> int:
        """How many entries the cursor moves over: the options, then "Other"."""
        return len(self.question.options) + 1

    @property
    def other(self) -> int:
        """The index of the "Other" entry."""
        return len(self.question.options)

    @property
    def on_other(self) -> bool:
        """Whether the cursor is on "Other"."""
        return self.cursor == self.other

    @property
    def done(self) -> bool:
        """Whether the question has ended (answered or dismissed); keys no longer count."""
        return self.outcome is not None

    def label(self, index: int) -> str:
        """The label shown for entry `index`."""
        return OTHER_LABEL if index == self.other else self.question.options[index].label

    def press(self, key: Key) -> None:
        """What `key` does at the list (ignored while typing or once ended)."""
        if self.done or self.typing:
            return
        match key:
            case Key.UP:
                self.cursor = (self.cursor - 1) % self.entries
            case Key.DOWN:
                self.cursor = (self.cursor + 1) % self.entries
            case Key.ESCAPE:
                self.outcome = Dismissed()
            case Key.TOGGLE | Key.ENTER if self.on_other:
                self.typing = True
            case Key.TOGGLE if self.question.multi_select:
                self.ticked ^= {self.cursor}
            case Key.ENTER if self.question.multi_select:
                self.outcome = Answered(self._joined(self.ticked or {self.cursor}, ""))
            case Key.TOGGLE | Key.ENTER:
                self.outcome = Answered(self.label(self.cursor))

    def submit_text(self, text: str) -> None:
        """The line for the person's own answer was entered: blank goes back to the list,
        anything else answers the question (after the ticked options, in multi-select)."""
        if self.done or not self.typing:
            return
        self.typing = False
        own = text.strip()
        if not own:
            return
        chosen = self.ticked if self.question.multi_select else set()
        self.outcome = Answered(self._joined(chosen, own))

    def leave_text(self) -> None:
        """Esc on the line for the person's own answer: back to the list, nothing typed."""
        self.typing = False

    def _joined(self, chosen: set[int], own: str) -> str:
        parts = [self.question.options[i].label for i in sorted(chosen)]
        if own:
            parts.append(own)
        return ANSWER_SEPARATOR.join(parts)
