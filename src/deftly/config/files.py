"""`[files]`: limits of the file tools (Read, Write, Edit, Glob, Grep, ReadMediaFile)."""

from __future__ import annotations

from deftly.config.base import Section


class FilesConfig(Section):
    pass
