"""`[session]`: how long a workspace's finished sessions (spilled results, background
task logs, plans) are kept on disk."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section


class SessionConfig(Section):
    """`[session]`: how long finished sessions of a workspace are kept before a runtime's start
    removes them."""

    keep_days: float = Field(
        7.0,
        ge=0,
        description=(
            "A finished session of this workspace untouched for this many days is removed "
            "when a runtime starts (0 keeps every session)."
        ),
    )
