"""Events for UIs: a call started (with its display), made progress, finished."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from deftly.contract.display import Display
from deftly.contract.tool import ToolUpdate
from deftly.execution.calls import CallResult

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    call_id: str
    name: str
    args: Any
    description: str | None = None
    display: Display | None = None


@dataclass(frozen=True, slots=True)
class ToolProgress:
    call_id: str
    name: str
    update: ToolUpdate


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call_id: str
    name: str
    call: CallResult


@dataclass(frozen=True, slots=True)
class RuntimeNotice:
    """Anything else a UI may want to show (a background task finished, a server died).

    The text may be given as a function, so a notice nobody reads costs no formatting.
    """

    kind: str
    text: str | Callable[[], str]
    data: Any = None

    @property
    def message(self) -> str:
        return self.text if isinstance(self.text, str) else self.text()


Event: TypeAlias = ToolCallStarted | ToolProgress | ToolCallFinished | RuntimeNotice
EventListener: TypeAlias = Callable[[Event], None]


class EventBus:
    """Fans events out to listeners; a listener that raises is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", type(event).__name__)
