"""Line endings and the "model view" of a file, shared by Read, Edit and Write.

A model sees a pure-CRLF file with LF endings (its text is cleaner and its `old_string`s
match), and Edit/Write put CRLF back. A file that mixes endings, or has carriage returns
that end nothing, is shown as it is with each CR made visible as the two characters `\\r`,
and Edit matches it byte for byte, so nothing outside the edited span ever changes.
"""

from __future__ import annotations

from typing import Literal

from deftly.contract.records import frozen

Style = Literal["none", "lf", "crlf", "mixed"]

VISIBLE_CR = "\\r"


@frozen
class EndingStats:
    """How many CRLF pairs, bare LFs and lone CRs a text has."""

    crlf: int = 0
    bare_lf: int = 0
    lone_cr: int = 0

    @property
    def style(self) -> Style:
        """The file's line-ending style: "lf", "crlf", "mixed" (or none)."""
        if self.lone_cr or (self.crlf and self.bare_lf):
            return "mixed"
        if self.crlf:
            return "crlf"
        if self.bare_lf:
            return "lf"
        return "none"

    def __add__(self, other: EndingStats) -> EndingStats:
        return EndingStats(
            self.crlf + other.crlf, self.bare_lf + other.bare_lf, self.lone_cr + other.lone_cr
        )


def ending_stats(data: str | bytes) -> EndingStats:
    """Count the endings of a complete text (str or bytes)."""
    # `in` is a fast scan; most files have no CR at all, so its counts are skipped.
    if isinstance(data, str):
        lf = data.count("\n")
        cr = data.count("\r") if "\r" in data else 0
        crlf = data.count("\r\n") if cr else 0
    else:
        lf = data.count(b"\n")
        cr = data.count(b"\r") if b"\r" in data else 0
        crlf = data.count(b"\r\n") if cr else 0
    return EndingStats(crlf, lf - crlf, cr - crlf)


class EndingCounter:
    """`ending_stats` over a file read in chunks (a CRLF may straddle two chunks)."""

    def __init__(self) -> None:
        self.lf = 0
        self.cr = 0
        self.crlf = 0
        self._last_was_cr = False

    def feed(
        self, data: bytes | bytearray, length: int | None = None, lf: int | None = None
    ) -> None:
        """Count `data[:length]`; `lf` is its LF count when the caller already has it."""
        size = len(data) if length is None else length
        if size == 0:
            return
        self.lf += data.count(b"\n", 0, size) if lf is None else lf
        if data.find(b"\r", 0, size) >= 0:  # rare, and `find` is far cheaper than `count`
            self.cr += data.count(b"\r", 0, size)
            self.crlf += data.count(b"\r\n", 0, size)
        if self._last_was_cr and data[0] == 0x0A:
            self.crlf += 1
        self._last_was_cr = data[size - 1] == 0x0D

    @property
    def stats(self) -> EndingStats:
        """The counts so far, each ending counted once (a CRLF is not also an LF)."""
        return EndingStats(self.crlf, self.lf - self.crlf, self.cr - self.crlf)


def to_model_view(text: str, style: Style) -> str:
    """The text a model works with: CRLF shown as LF for a pure-CRLF file."""
    return text.replace("\r\n", "\n") if style == "crlf" else text


def materialize(text: str, style: Style) -> str:
    """Back from the model view: every line break becomes CRLF in a pure-CRLF file.

    Both LF and CRLF in the model's text become CRLF (never `\\r\\r\\n`); other styles are
    written exactly as given.
    """
    if style != "crlf":
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def show_carriage_returns(text: str) -> str:
    """Make every CR visible as the two characters `\\r` (for mixed-ending files)."""
    return text.replace("\r", VISIBLE_CR)


def split_lines_keepends(text: str) -> list[str]:
    """Split on LF only, keeping the terminators; a lone CR does not end a line."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
