"""One notification for the person, as the `data` of a `RuntimeNotice` of kind "notify".

Whoever shows it to a person (a terminal, an MCP client, a desktop popup) says so with
`delivered(channel)` while the notice is emitted (bus listeners run synchronously), so the
tool can tell the model truthfully where the message went.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

NOTICE_KIND = "notify"
"""The `RuntimeNotice.kind` of a notification for the person."""

Urgency: TypeAlias = Literal["low", "normal", "high"]


@dataclass(eq=False)
class Notification:
    """A short message for the person: `low` is shown only; `normal` and `high` also
    alert (the terminal bell, a desktop notification; `high` one that stays)."""

    message: str
    title: str | None = None
    urgency: Urgency = "normal"
    channels: list[str] = field(default_factory=list)
    """How it reached the person, as each channel reported it (in order)."""

    @property
    def text(self) -> str:
        """The one text of the notice: `title: message`, or the message."""
        return f"{self.title}: {self.message}" if self.title else self.message

    @property
    def alerts(self) -> bool:
        """Whether it should draw attention (bell, desktop), not only be shown."""
        return self.urgency != "low"

    def delivered(self, channel: str) -> None:
        """Record that `channel` showed it to the person (said once per channel)."""
        if channel not in self.channels:
            self.channels.append(channel)
