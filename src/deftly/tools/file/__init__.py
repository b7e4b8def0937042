"""File tools: Read, Write, Edit, Glob, Grep, ListDirectory, ReadMediaFile."""

from __future__ import annotations

from deftly.env.base import FS, PROCESS
from deftly.registry.contribution import ToolContribution
from deftly.tools.file.edit import EditTool
from deftly.tools.file.glob import GlobTool
from deftly.tools.file.grep import GrepTool
from deftly.tools.file.list_directory import ListDirectoryTool
from deftly.tools.file.read import ReadTool
from deftly.tools.file.read_media import ReadMediaFileTool
from deftly.tools.file.write import WriteTool

CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(ReadTool, requires=[FS]),
    ToolContribution.of(WriteTool, requires=[FS]),
    ToolContribution.of(EditTool, requires=[FS]),
    ToolContribution.of(GlobTool, requires=[FS, PROCESS]),
    ToolContribution.of(GrepTool, requires=[FS, PROCESS]),
    ToolContribution.of(ListDirectoryTool, requires=[FS, PROCESS]),
    ToolContribution.of(ReadMediaFileTool, requires=[FS]),
]
