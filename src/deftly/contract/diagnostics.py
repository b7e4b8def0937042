"""Diagnostics: problems found while loading config, tools or plugins.

They never stop the runtime; they are kept, shown by `deftly tools`, and available from
Python as `Runtime.diagnostics`.
"""

from __future__ import annotations

from typing import Literal

from deftly.contract.records import frozen


@frozen
class Diagnostic:
    """One problem found while loading config, tools or plugins: how bad it is, where it came from,
    and what happened."""

    level: Literal["warning", "error"]
    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.source}: {self.message}"
