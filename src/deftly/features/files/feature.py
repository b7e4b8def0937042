"""The files feature: Read, Write, Edit, Glob, Grep, ListDirectory, ReadMediaFile.

Session step: the session's memory of what was read and written (`FileTracker`, the
stale-read guard), which the permission engine also asks (a file this session saw may
change without a question in manual mode).
"""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import Feature, SessionContext
from deftly.features.files import CONTRIBUTIONS
from deftly.features.files.tracker import FileTracker
from deftly.registry.contribution import ToolContribution


class FilesFeature(Feature):
    """The file tools and their shared file tracker."""

    name: ClassVar[str] = "files"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_session(self, ctx: SessionContext) -> None:
        tracker = FileTracker(ctx.config.files.stale_hash_max_bytes)
        ctx.services.provide(tracker)
        ctx.permissions.seen_files = tracker.get


FEATURE = FilesFeature()
