"""`[hooks]`: external commands run before and after tool calls."""

from __future__ import annotations

from deftly.config.base import Section


class HooksConfig(Section):
    pass
