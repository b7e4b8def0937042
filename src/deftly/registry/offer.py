"""What the model is offered now: the tools that are switched on and usable at this moment.

A tool may be registered yet not offered: the tool policy switched it off, nobody can answer
the questions it asks, nothing consumes the inbox it fills. A tool whose text depends on what
else is offered (EnterPlanMode mentions cron only when the cron tools are there) asks the
agent's `ToolOffer`, a service in its scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from deftly.contract.traits import ToolTraits, traits_of
from deftly.registry.registry import RegisteredTool


class ToolOffer:
    """One agent's offered tools, read afresh at every question."""

    def __init__(self, entries: Callable[[], Iterable[RegisteredTool]]) -> None:
        self._entries = entries

    def entries(self) -> list[RegisteredTool]:
        """The offered tools now."""
        return list(self._entries())

    def any(self, has: Callable[[ToolTraits], bool]) -> bool:
        """Whether an offered tool has traits for which `has` is true."""
        for entry in self._entries():
            traits = traits_of(entry.tool)
            if traits is not None and has(traits):
                return True
        return False


NOTHING_OFFERED = ToolOffer(tuple)
"""For a tool built outside an agent: it sees no other tool."""
