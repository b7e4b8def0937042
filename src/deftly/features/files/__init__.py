"""File tools: Read, Write, Edit, Glob, Grep, ListDirectory, ReadMediaFile."""

from __future__ import annotations

from deftly.env.base import FS, PROCESS
from deftly.features.files.edit import EditTool
from deftly.features.files.glob import GlobTool
from deftly.features.files.grep import GrepTool
from deftly.features.files.list_directory import ListDirectoryTool
from deftly.features.files.read import ReadTool
from deftly.features.files.read_media import ReadMediaFileTool
from deftly.features.files.write import WriteTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(ReadTool, requires=[FS]),
    ToolContribution.of(WriteTool, requires=[FS]),
    ToolContribution.of(EditTool, requires=[FS]),
    ToolContribution.of(GlobTool, requires=[FS, PROCESS]),
    ToolContribution.of(GrepTool, requires=[FS, PROCESS]),
    ToolContribution.of(ListDirectoryTool, requires=[FS, PROCESS]),
    ToolContribution.of(ReadMediaFileTool, requires=[FS]),
]
