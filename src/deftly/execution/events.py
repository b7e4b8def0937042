"""Events for UIs: a call started (with its display), made progress, finished; notices.

Every event carries an `Identity` (session, agent, turn), so a UI watching one session can
tell whose call it is when a parent agent and its sub-agents work at once. The executor
stamps its own identity on the call events. A `RuntimeNotice` carries the identity of
whoever it concerns: the call's for the permission gate; the agent that started a
background task for that task's ending; and, for services of the whole session that no
agent owns (MCP server connections, the permission mode), `session_wide(session_id)`,
whose `agent_id` is `NO_AGENT` ("").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import field
from typing import Any, TypeAlias

from deftly.contract.display import Display
from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.contract.tool import ToolUpdate
from deftly.execution.calls import CallResult

log = logging.getLogger(__name__)

NO_AGENT = ""
"""The `agent_id` of a notice from a session-wide service, which no agent owns."""


def session_wide(session_id: str) -> Identity:
    """The identity of a notice that concerns the whole session, no one agent."""
    return Identity(session_id, NO_AGENT, None)


@frozen
class BatchStarted:
    """A batch of calls opened: one model step's calls follow (they may arrive one by one,
    and start and finish in any order, while the model still streams)."""

    identity: Identity = field(default_factory=Identity)


@frozen
class ToolCallStarted:
    """A call passed its checks (or was refused) and is announced, with how to show it."""

    call_id: str
    name: str
    args: Any
    description: str | None = None
    display: Display | None = None
    identity: Identity = field(default_factory=Identity)


@frozen
class ToolProgress:
    """A running call reported progress (output lines, a status, a fraction done)."""

    call_id: str
    name: str
    update: ToolUpdate
    identity: Identity = field(default_factory=Identity)


@frozen
class ToolCallFinished:
    """A call ended, whatever its outcome; `call` is its final record."""

    call_id: str
    name: str
    call: CallResult
    identity: Identity = field(default_factory=Identity)


@frozen
class RuntimeNotice:
    """Anything else a UI may want to show (a background task finished, a server died).

    The text may be given as a function, so a notice nobody reads costs no formatting.
    `identity` is whom it concerns (see the module docstring; `session_wide(...)` for a
    service of the whole session).
    """

    kind: str
    text: str | Callable[[], str]
    data: Any = None
    identity: Identity = field(default_factory=Identity)

    @property
    def message(self) -> str:
        """The notice's text (formatted now if it was given as a function)."""
        return self.text if isinstance(self.text, str) else self.text()


Event: TypeAlias = BatchStarted | ToolCallStarted | ToolProgress | ToolCallFinished | RuntimeNotice
EventListener: TypeAlias = Callable[[Event], None]


class EventBus:
    """Fans events out to listeners; a listener that raises is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call `listener` with every event from now on; returns the way to stop."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Give `event` to every listener, in the order they subscribed."""
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", type(event).__name__)
