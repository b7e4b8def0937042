"""The shapes of the file tools' structured results (`ToolResult.structured`).

Each TypedDict is both what the tool builds (a plain dict: nothing is validated when a
call runs) and, through `OutputSchema`, the tool's `output_schema`. The structured data
holds exactly what the text shows: the same page, the same cut lines, `truncated` where
the text says more remain.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict


class GlobOutput(TypedDict):
    """Files whose path matches the pattern, newest first."""

    paths: Annotated[
        list[str],
        Field(description="The matching files shown, newest first (relative to the cwd)."),
    ]
    count: Annotated[int, Field(description="How many files match in all.")]
    truncated: Annotated[
        bool, Field(description="More files match than are listed (only the newest are).")
    ]
    incomplete: Annotated[
        bool,
        Field(description="The search timed out or some directories could not be read."),
    ]


class GrepLine(TypedDict):
    """One line of content output: a match, or a context line around one."""

    path: str
    line: Annotated[int | None, Field(description="Its line number (null when -n is off).")]
    text: Annotated[str, Field(description="The line, cut around the match when very long.")]
    context: Annotated[
        bool | None,
        Field(description="A context line (-A/-B/-C), not a match; null when -n is off."),
    ]


class GrepCount(TypedDict):
    """How many matches one file has."""

    path: str
    count: int


class GrepOutput(TypedDict):
    """One page of Grep's results; which list is present depends on `mode`."""

    mode: Annotated[
        Literal["files_with_matches", "content", "count_matches"],
        Field(description="The output_mode of the call: it says which list is present."),
    ]
    files: NotRequired[
        Annotated[list[str], Field(description="files_with_matches: paths, newest first.")]
    ]
    matches: NotRequired[Annotated[list[GrepLine], Field(description="content: the lines.")]]
    counts: NotRequired[
        Annotated[list[GrepCount], Field(description="count_matches: per-file counts.")]
    ]
    total_matches: NotRequired[
        Annotated[int, Field(description="count_matches: matches in all files together.")]
    ]
    total: Annotated[
        int, Field(description="Results in all (files, lines or counted files), every page.")
    ]
    offset: Annotated[int, Field(description="Results skipped before this page.")]
    next_offset: Annotated[
        int | None, Field(description="The offset of the next page; null when none is left.")
    ]
    truncated: Annotated[
        bool, Field(description="More results remain, or some long lines were cut.")
    ]
    incomplete: Annotated[
        bool, Field(description="The search timed out or some files could not be searched.")
    ]


class EditOutput(TypedDict):
    """What an Edit changed."""

    path: Annotated[str, Field(description="The file edited (relative to the cwd).")]
    replacements: Annotated[int, Field(description="How many occurrences were replaced.")]
    lines: Annotated[
        list[int],
        Field(description="Where the first replacements are now (line numbers, at most 10)."),
    ]
    line_delta: Annotated[int, Field(description="How many lines the file gained (or lost).")]
    bytes: Annotated[int, Field(description="The file's size afterwards, in bytes.")]


class WriteOutput(TypedDict):
    """What a Write did."""

    path: Annotated[str, Field(description="The file written (relative to the cwd).")]
    action: Literal["created", "overwritten", "appended"]
    bytes: Annotated[int, Field(description="Bytes written (as encoded on disk).")]
    kept: Annotated[
        list[str],
        Field(description='What was kept of the old file\'s format ("CRLF line endings").'),
    ]
