"""Repeated tool calls (reference: builtin-tools §1.10).

Within one step, identical calls (same tool, same arguments once canonicalised) run once
and share the result. Across steps, a streak of the same call is answered with
escalating reminders, and at the last threshold the turn ends: small models loop like
this, and each loop costs a request.
"""

from __future__ import annotations

import json

from deftly.contract.records import frozen
from deftly.execution.calls import ArgumentsParseError, parse_arguments

FIRST_REMINDER = 3
SECOND_REMINDER = 5
FINAL_WARNING = 8
STOP = 12


def call_key(name: str, arguments: str) -> str:
    """The call's identity: its tool and its arguments in canonical JSON (raw text when
    they are not JSON)."""
    try:
        value = parse_arguments(arguments)
    except ArgumentsParseError:
        return f"{name}\0{arguments}"
    return f"{name}\0{json.dumps(value, sort_keys=True, separators=(',', ':'))}"


@frozen
class Nudge:
    """What to add to a repeated call's result, and whether the turn must end."""

    text: str
    stop_turn: bool = False


class RepeatWatch:
    """Counts how many times in a row the model makes the same call (one agent)."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._streak = 0

    def reset(self) -> None:
        """A new user turn: nothing repeats yet."""
        self._key, self._streak = None, 0

    def observe(self, key: str, name: str) -> Nudge | None:
        """One call of a step (each distinct call of a step once, in order)."""
        if key == self._key:
            self._streak += 1
        else:
            self._key, self._streak = key, 1
        n = self._streak
        if n >= STOP:
            return Nudge(
                f'You have called "{name}" with the same arguments {n} times in a row. The '
                "turn is ended here. Write your final response now, from what you have.",
                stop_turn=True,
            )
        if n >= FINAL_WARNING:
            return Nudge(
                f'You have called "{name}" with the same arguments {n} times in a row and '
                "got the same result each time. Write your final response now, or do "
                "something different; repeating it again will end the turn."
            )
        if n >= SECOND_REMINDER:
            return Nudge(
                f'This is the {n}th identical call to "{name}" in a row. Its result will not '
                "change: use what you have, or change your approach."
            )
        if n >= FIRST_REMINDER:
            return Nudge(
                f'You have made this same call to "{name}" {n} times in a row. If it did not '
                "give you what you need, try something else."
            )
        return None
