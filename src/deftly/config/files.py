"""`[files]`: limits of the file tools (Read, Write, Edit, Glob, Grep, ReadMediaFile).

Every limit a model runs into is stated in the tool's description, rendered from these
values, so the text a model reads is always the limit the tool enforces.
"""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section

KIB = 1024
MIB = 1024 * 1024


class FilesConfig(Section):
    """`[files]`: the limits of Read, Glob, Grep and the other file tools (the tool descriptions
    quote these values)."""

    # -- Read ------------------------------------------------------------------------------
    read_max_lines: int = Field(1_000, ge=1, le=100_000, description="Most lines one Read returns.")
    read_max_bytes: int = Field(
        100 * KIB, ge=1 * KIB, description="Most bytes (UTF-8, numbered lines) one Read returns."
    )
    read_max_line_chars: int = Field(
        2_000, ge=100, description="Longer lines are cut to this many characters, with a marker."
    )
    read_count_max_bytes: int = Field(
        256 * MIB,
        ge=0,
        description=(
            "Files up to this size get their total line count (a byte scan); bigger ones are "
            "only scanned as far as the window needs, and a tail is read from the end."
        ),
    )
    read_utf16_max_bytes: int = Field(
        10 * MIB, ge=0, description="Largest UTF-16 file Read transcodes (the whole file)."
    )
    # -- Write / Edit ----------------------------------------------------------------------
    edit_max_bytes: int = Field(
        256 * MIB, ge=1 * KIB, description="Largest file Edit (and a re-encoding Write) loads."
    )
    stale_hash_max_bytes: int = Field(
        16 * MIB,
        ge=0,
        description=(
            "Files up to this size are also fingerprinted by content when read or written, so "
            "a touched-but-unchanged file is not reported as changed."
        ),
    )
    # -- Glob / Grep -----------------------------------------------------------------------
    rg_path: str | None = Field(
        None, description="The rg binary to use (default: beside Python, then on PATH)."
    )
    search_timeout: float = Field(
        20.0, gt=0, le=600, description="Seconds a Glob or Grep may run before it is stopped."
    )
    glob_max_results: int = Field(100, ge=1, description="Most paths one Glob returns.")
    grep_head_limit: int = Field(
        250, ge=1, description="Default number of result lines per Grep page (head_limit)."
    )
    grep_max_line_chars: int = Field(
        500, ge=50, description="Matched lines longer than this are cut, with a marker."
    )
    grep_max_chars: int = Field(
        40_000, ge=1_000, description="Most characters one Grep result holds."
    )
    # -- ReadMediaFile -----------------------------------------------------------------------
    media_max_bytes: int = Field(
        100 * MIB, ge=1 * KIB, description="Largest media file ReadMediaFile opens."
    )
    image_byte_budget: int = Field(
        256 * KIB, ge=4 * KIB, description="Images are downscaled to fit in this many bytes."
    )
    image_max_edge: int = Field(
        2_000, ge=64, description="Images are downscaled so their longest edge fits this."
    )
    image_full_max_bytes: int = Field(
        3_932_160,
        ge=4 * KIB,
        description="Most bytes of one image sent at full resolution (full_resolution, region).",
    )
    image_max_pixels: int = Field(
        100_000_000, ge=1_000, description="Images with more pixels are not decoded."
    )
