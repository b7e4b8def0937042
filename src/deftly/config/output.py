"""`[output]`: the budget every tool result is held to."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section


class OutputConfig(Section):
    """`[output]`: how long a result a model is sent, and how a longer one is spilled to disk with a
    head and tail preview."""

    max_chars: int = Field(50_000, ge=1_000, description="Longest text result sent to a model.")
    retained_chars: int = Field(
        10_000_000, ge=1_000, description="Most characters of a long result kept on disk."
    )
    head_chars: int = Field(4_096, ge=0, description="Preview kept from the start.")
    tail_chars: int = Field(1_024, ge=0, description="Preview kept from the end.")
