"""Read: a window of a text file, as numbered lines, with a status note for the model.

A window never decodes more than itself: its start is found by counting LF bytes (or,
for a tail, by scanning back from the end), and only its lines are decoded. Whole-file
facts (the total line count, the line-ending style) come from one byte scan, cached by
file identity, and are skipped for files too big to scan quickly.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from io import BufferedIOBase
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.functional_validators import AfterValidator

from deftly.config.files import FilesConfig
from deftly.contract import ToolExecution, ToolResult, ToolTraits, describe
from deftly.contract.fs import FileStat
from deftly.env.base import ExecEnv
from deftly.execution.result_builder import MARKER
from deftly.features.files.base import FileToolFailed, TrackedFileTool
from deftly.features.files.common import human_size
from deftly.features.files.encoding import (
    SNIFF_BYTES,
    UTF8_BOM,
    Sniff,
    describe_encoding,
    sniff_encoding,
)
from deftly.features.files.filetype import detect_file_type
from deftly.features.files.line_endings import Style, ending_stats, show_carriage_returns
from deftly.features.files.lines import (
    IndexKey,
    LineIndex,
    LineIndexCache,
    Window,
    full_index,
    read_window,
    scan_to_line,
    tail_start,
)
from deftly.features.files.tracker import FileTracker, content_digest
from deftly.policy import Workspace

TAIL_MAX = 1000
INLINE_MAX_BYTES = 64 * 1024
"""A file this small is read without the hop to a worker thread (the hop costs more)."""


def _first_read(size: int) -> int:
    """How much to read first: all of a small file (exactly its size, so no read is spent
    finding its end, and the rest works in memory), else the sample that tells its kind."""
    if 0 < size <= INLINE_MAX_BYTES:
        return size
    return min(SNIFF_BYTES, size) or SNIFF_BYTES


def _not_zero(value: int) -> int:
    if value == 0:
        raise ValueError(
            "0 is not a line number; use 1 for the first line, or a negative number to read "
            "the end of the file"
        )
    return value


LineOffset = Annotated[int, AfterValidator(_not_zero)]


class ReadParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="The file to read: relative to the working directory, or absolute."
    )
    line_offset: LineOffset = Field(
        1,
        ge=-TAIL_MAX,
        json_schema_extra={"not": {"const": 0}},
        description=(
            "The line to start at (1 = the first line). A negative number reads the end of "
            f"the file: -100 starts 100 lines before the end (at most -{TAIL_MAX})."
        ),
    )
    n_lines: int | None = Field(
        None,
        ge=1,
        description="How many lines to read (default and maximum: the tool's line limit).",
    )


@dataclass
class _Rendered:
    lines: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)


@dataclass
class _Outcome:
    rendered: _Rendered
    total: int | None
    more_after: bool
    stopped_by: str | None  # "lines" | "bytes" | None
    style: Style
    tail_relative: bool = False


class ReadTool(TrackedFileTool[ReadParams]):
    """Read: a window of lines of a text file, numbered, with the stale-read stamp taken."""

    name = "Read"
    title = "Read a file"
    params = ReadParams
    description = describe("read.md")
    traits = ToolTraits(read_only=True, idempotent=True)
    action = "read"
    inline_max_bytes = INLINE_MAX_BYTES

    def __init__(
        self, env: ExecEnv, workspace: Workspace, config: FilesConfig, tracker: FileTracker
    ):
        super().__init__(env, workspace, config, tracker)
        self.indexes = LineIndexCache()

    def description_vars(self) -> Mapping[str, object]:
        c = self.config
        return {
            "MAX_LINES": f"{c.read_max_lines:,}",
            "MAX_BYTES": human_size(c.read_max_bytes),
            "MAX_LINE_CHARS": f"{c.read_max_line_chars:,}",
            "TAIL_MAX": f"{TAIL_MAX:,}",
            "COUNT_MAX": human_size(c.read_count_max_bytes),
            "UTF16_MAX": human_size(c.read_utf16_max_bytes),
            "MARKER": MARKER,
        }

    def resolve(self, args: ReadParams) -> ToolExecution:
        return self.file_execution(args.path, partial(self._read, args), f"Reading {args.path}")

    # -- the work (synchronous; runs in a worker thread) -------------------------------------

    def read(self, args: ReadParams, path: Path) -> ToolResult:
        """Read a window of `path` (already resolved by the path policy), in this thread."""
        return self.run_work(args.path, path, partial(self._read, args))

    def _read(self, args: ReadParams, path: Path) -> ToolResult:
        raw = args.path
        self.regular_file(
            path,
            directory=(
                f'"{raw}" is a directory, not a file. To see what it holds, use Glob with '
                f'path "{raw}" (pattern "*" for its files, "**/*" for everything below it).'
            ),
            special=(
                f'"{raw}" is not a regular file (it is a device, a socket or a pipe), so '
                "Read will not open it: reading it could block or never end."
            ),
        )
        with self.env.open_read(path, pinned=True) as handle:
            before = self.env.stat_handle(handle)
            header = handle.read(_first_read(before.st_size))
            sniff = self._check_kind(raw, path, header, before.st_size)
            note_extra: list[str] = []
            source: BufferedIOBase
            content: BufferedIOBase = handle  # the file's own bytes (for the digest)
            if sniff.is_utf16:
                transcoded = self._transcode(raw, handle, sniff, before.st_size)
                source, size = transcoded, len(transcoded.getbuffer())
                key = None
                note_extra.append(
                    f"The file is {describe_encoding(sniff.kind)} text, shown here transcoded; "
                    "Edit and Write keep its encoding."
                )
            else:
                source, size = handle, before.st_size
                if size <= len(header):  # all of it is read already: work in memory
                    source = content = io.BytesIO(header)
                key = (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns)
            outcome = self._window(raw, source, size, key, args)
            digest = self._digest(path, content, before)
            after = self.env.stat_handle(handle)
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise FileToolFailed(
                f'"{raw}" changed while it was being read (another program is writing it). '
                "Read it again."
            )
        self.tracker.stamp_digest(path, before, digest)
        return self._result(outcome, size, note_extra)

    def _digest(self, path: Path, handle: BufferedIOBase, st: FileStat) -> bytes | None:
        """The content hash for the stale-read guard (small files only; reused when the
        file is unchanged since it was last hashed)."""
        if not self.tracker.wants_digest(st.st_size):
            return None
        known = self.tracker.get(path)
        if known is not None and known.digest is not None and known.same_stat(st):
            return known.digest
        handle.seek(0)
        return content_digest(handle.read())

    def _check_kind(self, raw: str, path: Path, header: bytes, size: int) -> Sniff:
        whole = size <= len(header) <= SNIFF_BYTES  # the sample is all the file holds
        header = header[:SNIFF_BYTES]
        kind = detect_file_type(path, header, "text")
        if kind.kind == "image":
            raise FileToolFailed(
                f'"{raw}" is an image ({kind.mime}); Read shows only text. '
                "Use ReadMediaFile to look at it."
            )
        if kind.kind == "video":
            raise FileToolFailed(
                f'"{raw}" is a video ({kind.mime}); Read shows only text, and no tool here '
                "plays video. To look at it, extract frames with Bash (e.g. `ffmpeg -i "
                f'"{raw}" -vf fps=1 frame_%03d.png`) and open them with ReadMediaFile.'
            )
        sniff = sniff_encoding(header, complete=whole)
        if sniff.kind == "binary":
            raise FileToolFailed(_binary_message(raw, kind.mime))
        if sniff.kind == "undecodable":
            raise FileToolFailed(_undecodable_message(raw))
        if sniff.is_utf16 and size > self.config.read_utf16_max_bytes:
            name = describe_encoding(sniff.kind)
            raise FileToolFailed(
                f'"{raw}" is {name} text, {human_size(size)}: too large to transcode (the '
                f"limit is {human_size(self.config.read_utf16_max_bytes)}). Convert it to "
                f'UTF-8 first, e.g. `iconv -f {name.replace(" ", "")} -t UTF-8 "{raw}" > '
                f'"{raw}.utf8"`, and read the converted copy.'
            )
        return sniff

    def _transcode(self, raw: str, handle: BufferedIOBase, sniff: Sniff, size: int) -> io.BytesIO:
        handle.seek(0)
        data = handle.read()[len(sniff.bom) :]
        try:
            text = data.decode(sniff.kind, "strict")
        except UnicodeDecodeError:
            if not sniff.bom:  # UTF-16 guessed from zero bytes alone: binary after all
                raise FileToolFailed(_binary_message(raw, "application/octet-stream")) from None
            raise FileToolFailed(_undecodable_message(raw)) from None
        if "\0" in text:
            raise FileToolFailed(_binary_message(raw, "application/octet-stream"))
        return io.BytesIO(text.encode("utf-8", "surrogatepass"))

    # -- finding and rendering the window ------------------------------------------------

    def _window(
        self,
        raw: str,
        source: BufferedIOBase,
        size: int,
        key: IndexKey | None,
        args: ReadParams,
    ) -> _Outcome:
        c = self.config
        limit = min(args.n_lines or c.read_max_lines, c.read_max_lines)
        max_line_bytes = (c.read_max_line_chars + 1) * 4
        countable = size <= c.read_count_max_bytes
        if size == 0:
            return _Outcome(_Rendered(), 0, False, None, "none")
        index = self.indexes.get(key) if key is not None else None
        tail = args.line_offset < 0
        tail_relative = False
        expected: int | None = None
        if not tail:
            first = args.line_offset
            if index is not None:
                start = index.line_start(source, first)
            else:
                scan = scan_to_line(source, first, count_all=countable, size=size)
                start, index = scan.line_start, scan.index
                self._remember(key, index)
            if start is None or start >= size:
                total = index.total_lines if index else None
                return _Outcome(_Rendered(), total, False, None, "none")
        else:
            back = -args.line_offset
            if index is None and countable:
                index = full_index(source, size=size)
                self._remember(key, index)
            if index is not None:
                first = max(1, index.total_lines - back + 1)
                found = index.line_start(source, first)
                assert found is not None
                start = found
            else:
                start = tail_start(source, size, back)
                first = 1 if start == 0 else -back
                tail_relative = start != 0
            expected = size - start
        window = read_window(source, start, first, limit, max_line_bytes, expected_bytes=expected)
        joined = b"\n".join(window.data)
        if index is not None:
            style = index.stats.style
        else:
            style = _window_style(joined + (b"\n" if window.terminated else b""))
        total = index.total_lines if index is not None else None
        if total is None and not window.more and not tail_relative and first > 0:
            total = first + len(window.data) - 1
        rendered, stopped_by = self._render(raw, window, joined, style, tail)
        more_after = window.more or (stopped_by == "bytes" and not tail)
        if (
            stopped_by is None
            and window.more
            and len(window.data) == limit
            and limit == c.read_max_lines
        ):
            stopped_by = "lines"
        return _Outcome(rendered, total, more_after, stopped_by, style, tail_relative)

    def _remember(self, key: IndexKey | None, index: LineIndex | None) -> None:
        if key is not None and index is not None:
            self.indexes.put(key, index)

    def _render(
        self, raw: str, window: Window, joined: bytes, style: Style, tail: bool
    ) -> tuple[_Rendered, str | None]:
        """Decode and number the window's lines (in bulk), within the byte budget.

        Forward reads stop before the line that would pass the budget; a tail keeps the
        lines nearest the end and drops from the front. At least one line is always kept.
        """
        c = self.config
        first = window.first
        if (first == 1 and joined.startswith(UTF8_BOM)) or window.cut:
            data = list(window.data)
            if first == 1 and data[0].startswith(UTF8_BOM):
                data[0] = data[0][len(UTF8_BOM) :]
            for i in window.cut:
                data[i] = _without_partial_char(data[i])
            joined = b"\n".join(data)
        try:
            text = joined.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = first + joined.count(b"\n", 0, exc.start)
            raise FileToolFailed(_invalid_line_message(raw, line)) from None
        if "\0" in text:
            line = first + text.count("\n", 0, text.index("\0"))
            raise FileToolFailed(_binary_message(raw, "application/octet-stream", line))
        if style == "crlf":
            text = text.replace("\r\n", "\n")
            if window.terminated and text.endswith("\r"):
                text = text[:-1]
        lines = text.split("\n")
        cap = c.read_max_line_chars
        out = _Rendered()
        for i, piece in enumerate(lines):
            if i in window.cut or len(piece) > cap:
                lines[i] = piece[:cap] + MARKER
                out.cut.append(first + i)
        if style == "mixed" and "\r" in text:
            lines = [show_carriage_returns(piece) for piece in lines]
        rendered = [f"{first + i}\t{piece}" for i, piece in enumerate(lines)]
        numbers = list(range(first, first + len(rendered)))
        stopped: str | None = None
        total = sum(map(len, rendered)) + len(rendered) - 1
        if not text.isascii() or total > c.read_max_bytes:
            costs = [len(r.encode("utf-8", "surrogatepass")) + 1 for r in rendered]
            if costs:
                costs[0] -= 1
            if tail:
                used = sum(costs)
                drop = 0
                while used > c.read_max_bytes and drop < len(rendered) - 1:
                    used -= costs[drop]
                    drop += 1
                if drop:
                    costs[drop] -= 1 if drop < len(costs) else 0
                    rendered, numbers = rendered[drop:], numbers[drop:]
                    stopped = "bytes-tail"
            else:
                used = 0
                for keep, cost in enumerate(costs):
                    if keep and used + cost > c.read_max_bytes:
                        rendered, numbers = rendered[:keep], numbers[:keep]
                        stopped = "bytes"
                        break
                    used += cost
                    if used >= c.read_max_bytes and keep + 1 < len(costs):
                        rendered, numbers = rendered[: keep + 1], numbers[: keep + 1]
                        stopped = "bytes"
                        break
        out.lines = rendered
        out.numbers = numbers
        if out.cut and stopped:
            kept = set(numbers)
            out.cut = [n for n in out.cut if n in kept]
        return out, stopped

    # -- the result ------------------------------------------------------------------------

    def _result(self, outcome: _Outcome, size: int, extra: list[str]) -> ToolResult:
        c = self.config
        rendered = outcome.rendered
        parts: list[str] = []
        total = outcome.total
        of_total = f" of {total:,}" if total is not None else ""
        if rendered.lines:
            first, last = rendered.numbers[0], rendered.numbers[-1]
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            parts.append(f"Showed {span}{of_total}.")
        elif size == 0:
            parts.append("The file is empty.")
        elif total is not None:
            parts.append(
                f"No lines to show: the file has {total:,} line{'s' if total != 1 else ''}."
            )
        else:
            parts.append("No lines to show: the file ends before that line.")
        if rendered.lines:
            last = rendered.numbers[-1]
            if outcome.stopped_by == "lines":
                parts.append(
                    f"Stopped at the {c.read_max_lines:,}-line limit; continue with "
                    f"line_offset={last + 1}."
                )
            elif outcome.stopped_by == "bytes" and outcome.more_after:
                parts.append(
                    f"Stopped at the {human_size(c.read_max_bytes)} limit; continue with "
                    f"line_offset={last + 1}."
                )
            elif outcome.stopped_by == "bytes-tail":
                parts.append(
                    f"Only the last lines fit in the {human_size(c.read_max_bytes)} limit."
                )
            elif outcome.more_after:
                parts.append(f"More lines follow; continue with line_offset={last + 1}.")
            else:
                parts.append("End of file.")
        if outcome.total is None and size > c.read_count_max_bytes:
            where = (
                "lines are numbered from the end (-1 is the last line); read further back "
                f"with a more negative line_offset (down to -{TAIL_MAX})"
                if outcome.tail_relative
                else "it continues after these lines"
                if outcome.more_after
                else "this is its end"
            )
            parts.append(
                f"The file is {human_size(size)}, too big to count its lines (the limit is "
                f"{human_size(c.read_count_max_bytes)}); {where}."
            )
        if rendered.cut:
            listed = ", ".join(str(n) for n in rendered.cut[:20])
            more = f" and {len(rendered.cut) - 20} more" if len(rendered.cut) > 20 else ""
            parts.append(
                f"Line{'s' if len(rendered.cut) > 1 else ''} {listed}{more} "
                f"{'are' if len(rendered.cut) > 1 else 'is'} longer than "
                f"{c.read_max_line_chars:,} characters and cut at {MARKER}; to see a part "
                "of such a line, Grep for it (e.g. pattern `.{0,200}WORD.{0,200}`)."
            )
        if outcome.style == "mixed":
            parts.append(
                "This file mixes line endings, so every carriage return is shown as \\r. "
                "In Edit's old_string, write a real carriage return there (the JSON "
                "escape \\r), not a backslash and an r."
            )
        elif outcome.style == "crlf":
            parts.append("Line endings are CRLF, shown as LF; Edit and Write keep CRLF.")
        parts.extend(extra)
        note = "<system>" + " ".join(parts) + "</system>"
        return ToolResult.ok("\n".join(rendered.lines), note=note, spill_exempt=True)


def _window_style(data: bytes) -> Style:
    """The ending style seen in a window (when the file was too big to classify whole)."""
    if b"\r" not in data:
        return "lf" if b"\n" in data else "none"
    return ending_stats(data).style


def _without_partial_char(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence left at the end of a line cut at a byte cap."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _binary_message(raw: str, mime: str, line: int | None = None) -> str:
    where = f" (it holds NUL bytes at line {line})" if line is not None else ""
    kind = f" ({mime})" if mime not in ("text/plain", "application/octet-stream") else ""
    return (
        f'"{raw}" is a binary file{kind}{where}; Read shows only text. To look inside it, '
        "use a tool made for its format through Bash (e.g. `unzip -l`, `pdftotext`, `xxd | "
        "head`, `strings`), or Grep to find text in it."
    )


def _undecodable_message(raw: str) -> str:
    return (
        f'"{raw}" is not UTF-8 or UTF-16 text, so Read cannot show it. It is probably in a '
        "legacy encoding (Latin-1, Windows-1252, GBK, Shift_JIS...). Convert a copy to UTF-8 "
        f'with Bash, e.g. `iconv -f WINDOWS-1252 -t UTF-8 "{raw}" > "{raw}.utf8"`, and read '
        "that."
    )


def _invalid_line_message(raw: str, line: int) -> str:
    return (
        f'"{raw}" is not valid UTF-8 (line {line} holds bytes that are not UTF-8), so Read '
        "cannot show it. If the file is in a legacy encoding (Latin-1, Windows-1252, GBK...), "
        f'convert a copy with Bash, e.g. `iconv -f WINDOWS-1252 -t UTF-8 "{raw}" > '
        f'"{raw}.utf8"`, and read that.'
    )
