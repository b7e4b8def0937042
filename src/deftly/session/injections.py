"""The injection channel: everything the model must hear at the start of its next turn.

One channel per agent. Producers either push an injection when something happens (a
skill was loaded, a plan reminder) or register a *source* the channel asks when it is
drained (the deferred-tool announcement, background tasks that ended). Whoever talks to
the model drains the channel once per request: the agent loop before each step; without a
loop, the executor adds what is pending to the next tool result's note.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from deftly.contract.records import frozen

log = logging.getLogger(__name__)


@frozen
class Injection:
    """One thing to tell the model: `kind` names its producer ("deferred_tools",
    "task_finished", "skill", "plan_reminder", ...); `text` is what the model reads."""

    kind: str
    text: str


InjectionSource = Callable[[], Sequence[Injection]]
"""Asked at each drain: the injections pending now, each given out once."""


class Injections:
    """One agent's channel. Thread-safe: tasks end on watcher threads."""

    def __init__(self) -> None:
        self._pending: list[Injection] = []
        self._sources: list[tuple[InjectionSource, str | None]] = []
        self._lock = threading.Lock()

    def push(self, kind: str, text: str) -> None:
        """Queue `text` for the model's next turn."""
        with self._lock:
            self._pending.append(Injection(kind, text))

    def add_source(self, source: InjectionSource, kind: str | None = None) -> Callable[[], None]:
        """Ask `source` at every drain; returns the way to stop asking. `kind`: the one
        kind it yields, so a drain that does not take that kind does not ask it (a
        drain after every tool result stays cheap); None: it may yield any kind."""
        entry = (source, kind)
        with self._lock:
            self._sources.append(entry)

        def remove() -> None:
            with self._lock:
                if entry in self._sources:
                    self._sources.remove(entry)

        return remove

    def drain(self, kinds: Callable[[str], bool] | None = None) -> list[Injection]:
        """Everything pending, in order (pushed first, then each source's), each once.

        `kinds` keeps some back: only injections whose kind it accepts are taken (the rest
        stay for a later drain). A source that raises is logged and skipped.
        """
        with self._lock:
            sources = [
                source
                for source, kind in self._sources
                if kind is None or kinds is None or kinds(kind)
            ]
            if not sources and not self._pending:
                return []
        gathered: list[Injection] = []
        for source in sources:
            try:
                gathered.extend(source())
            except Exception:
                log.exception("injection source failed")
        with self._lock:
            self._pending.extend(gathered)
            if kinds is None:
                taken, self._pending = self._pending, []
            else:
                taken = [item for item in self._pending if kinds(item.kind)]
                self._pending = [item for item in self._pending if not kinds(item.kind)]
        return taken

    def peek(self) -> list[Injection]:
        """What is pushed and not yet drained (sources are not asked)."""
        with self._lock:
            return list(self._pending)
