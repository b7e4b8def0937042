"""`[shell]`: the Bash tool and background tasks."""

from __future__ import annotations

from deftly.config.base import Section


class ShellConfig(Section):
    pass
