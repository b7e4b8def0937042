"""The scripted model of the state tools' acceptance run: a table of moves, one model step
each, grouped in turns, and what the request after each move must carry.

A move is a tool call (its id is the move's name, so the result is found by id in the next
request; `then`: a second call in the same reply) or a turn's closing text. A call may be a
function of the request body, for a call that needs what an earlier result said (the id of
a cron job it made). `told` is what the tool message answering the call must contain;
`exact` and `pattern` pin it whole.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from deftly.agent.render import ERROR_MARK
from tests.agent.loop.helpers import content_text
from tests.cli_run.helpers import user_texts
from tests.scripted.script import Call, Reply, calls, say

ULID = "[0-9A-HJKMNP-TV-Z]{26}"
ABSENT_ID = "01JGZZZZZZZZZZZZZZZZZZZZZZ"
"""A well-formed job id no job has."""


@dataclass(frozen=True)
class Move:
    """One model step: a call (`call`) or the turn's closing text (`text`)."""

    name: str
    call: Call | Callable[[dict[str, Any]], Call] | None = None
    text: str | None = None
    told: tuple[str, ...] = ()
    exact: str | None = None
    pattern: str | None = None
    error: bool = False
    then: Call | None = None
    """A second call in the same reply, after `call` (its id: the name + `-then`): what a
    call that ends the batch cuts off."""

    def reply(self, body: dict[str, Any]) -> Reply:
        """What the model answers to the request `body`."""
        if self.call is None:
            assert self.text is not None, self.name
            return say(self.text)
        call = self.call(body) if callable(self.call) else self.call
        made = [dataclasses.replace(call, id=self.name)]
        if self.then is not None:
            made.append(dataclasses.replace(self.then, id=f"{self.name}-then"))
        return calls(*made)


@dataclass(frozen=True)
class Turn:
    """A turn: its moves (none when a budget ends it before its first step), how it ends,
    and what the new user messages of its first request must and must not contain."""

    name: str
    moves: Sequence[Move]
    end: str
    opening: tuple[str, ...] = ()
    not_opening: tuple[str, ...] = ()


class Sequencer:
    """The script function: the n-th request gets the n-th move's reply."""

    def __init__(self, moves: Sequence[Move]) -> None:
        self.moves = list(moves)
        self._next = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            index = self._next
            self._next += 1
        if index >= len(self.moves):
            return say(f"(no move {index + 1}: the script is over)")
        return self.moves[index].reply(body)


# -- reading recorded requests -----------------------------------------------------------


def tool_result(request: dict[str, Any], call_id: str) -> tuple[str, bool]:
    """The text of the tool message answering `call_id`, without the error mark, and
    whether it was marked as an error."""
    found = [
        m for m in request["messages"] if m["role"] == "tool" and m.get("tool_call_id") == call_id
    ]
    assert found, f"no tool message answers {call_id}"
    text = content_text(found[-1])
    error = text.startswith(ERROR_MARK)
    return (text.removeprefix(ERROR_MARK).strip() if error else text), error


def fresh_user_texts(request: dict[str, Any]) -> list[str]:
    """The user messages this request adds after the last assistant or tool message: a
    turn's prompt and what the loop injected just before the request."""
    messages = request["messages"]
    at = len(messages)
    while at > 0 and messages[at - 1]["role"] == "user":
        at -= 1
    return user_texts({"messages": messages[at:]})


def offered(request: dict[str, Any]) -> set[str]:
    """The tool names a request offers."""
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def created_job_id(body: dict[str, Any], call_id: str) -> str:
    """The id in the CronCreate result answering `call_id`."""
    text, _ = tool_result(body, call_id)
    found = re.search(rf"^id: ({ULID})$", text, re.MULTILINE)
    assert found, text
    return found.group(1)
