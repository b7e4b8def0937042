"""Write: create a file, replace all of it, or append to it.

Overwriting goes through a temporary file and a rename (the old file or the new one,
never half), keeping the replaced file's permission bits, encoding, byte-order mark and
CRLF line endings, so a model writing back what Read showed it changes only the text.
Appending adds to the end, in the file's encoding and line-ending style, and is cut
back if it fails.
"""

from __future__ import annotations

import errno
import stat
from dataclasses import replace
from functools import partial
from io import BufferedIOBase
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import (
    Accesses,
    DiffDisplay,
    Display,
    FileIODisplay,
    ToolExecution,
    ToolResult,
    ToolTraits,
    WriteHow,
    describe,
)
from deftly.contract.fs import FileStat
from deftly.contract.output_schema import OutputSchema
from deftly.contract.records import frozen
from deftly.env.base import PathChanged
from deftly.features.files.base import FileToolFailed, TrackedFileTool
from deftly.features.files.common import human_size, os_error_message, shown_path, stale_message
from deftly.features.files.encoding import (
    SNIFF_BYTES,
    EncodingName,
    NotText,
    decode_text,
    describe_encoding,
    encode_text,
    sniff_encoding,
)
from deftly.features.files.line_endings import (
    EndingCounter,
    Style,
    ending_stats,
    materialize,
    to_model_view,
)
from deftly.features.files.outputs import WriteOutput
from deftly.features.files.tracker import same_stat

APPEND_PROBE_BYTES = 64 * 1024
_SCAN_CHUNK = 1 << 20
PREVIEW_MAX_BYTES = 4 << 20
"""An approval shows the diff of a Write over a file up to this size."""


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="The file to write: relative to the working directory, or absolute."
    )
    content: str = Field(description="The text to write (all of the file, or what to append).")
    mode: Literal["overwrite", "append"] = Field(
        "overwrite",
        description=(
            '"overwrite" (default): the file becomes exactly `content`. "append": `content` '
            "is added at the end (no line break is added for you)."
        ),
    )


@frozen
class Format:
    """How an existing file is written: its encoding, BOM and line-ending style."""

    encoding: EncodingName = "utf-8"
    bom: bytes = b""
    style: Style = "none"

    def encode(self, content: str) -> bytes:
        """`content` in this format: its line endings, encoding and BOM."""
        return encode_text(materialize(content, self.style), self.encoding, self.bom)

    def kept(self, content: str) -> list[str]:
        """What Write kept of the old file, in words (for the result)."""
        out: list[str] = []
        if self.style == "crlf" and materialize(content, "crlf") != content:
            out.append("CRLF line endings")
        if self.bom and self.encoding == "utf-8" and not content.startswith("\ufeff"):
            out.append("the UTF-8 byte-order mark")
        if self.encoding != "utf-8":
            out.append(f"the {describe_encoding(self.encoding)} encoding")
        return out


class WriteTool(TrackedFileTool[WriteParams]):
    """Write: create or overwrite (or append to) a file atomically, keeping its format."""

    name = "Write"
    title = "Write a file"
    params = WriteParams
    description = describe("write.md")
    traits = ToolTraits(destructive=True, writes_files=True)
    action = "write"
    output_schema = OutputSchema(WriteOutput)

    def resolve(self, args: WriteParams) -> ToolExecution:
        verb = "Appending to" if args.mode == "append" else "Writing"
        execution = self.file_execution(
            args.path, partial(self._write, args), f"{verb} {args.path}", content=args.content
        )
        if execution.accesses is None:
            return execution
        written = execution.accesses.written_paths[0]
        if args.mode != "append":
            return replace(execution, preview=partial(self._preview, args, Path(written)))
        # Appending changes the file where it is, so every hard link to it: the engine
        # asks about a file with other names, which may be anywhere.
        return replace(execution, accesses=Accesses.write_file(written, how=WriteHow.IN_PLACE))

    def _preview(self, args: WriteParams, path: Path) -> Display | None:
        """What the write changes, for a person asked to approve it: a diff against the
        file as it is now, or the content of a new file, said to be new."""
        shown = shown_path(path, self.workspace)
        try:
            st = self.env.stat(path)
        except FileNotFoundError:
            return DiffDisplay(path=shown, before="", after=args.content, new_file=True)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > PREVIEW_MAX_BYTES:
            return FileIODisplay(
                operation="write",
                path=shown,
                detail=f"replaces all of the current {human_size(st.st_size)} file (too large "
                "to compare)",
                content=args.content,
            )
        try:
            with self.env.open_read(path, pinned=True) as handle:
                data = handle.read()
            text = decode_text(data).text
        except (OSError, NotText, PathChanged):
            return None
        style = ending_stats(text).style
        after = to_model_view(args.content, style)
        return DiffDisplay(path=shown, before=to_model_view(text, style), after=after)

    def write(self, args: WriteParams, path: Path) -> ToolResult:
        """Write `path` (already resolved by the path policy), in this thread."""
        return self.run_work(args.path, path, partial(self._write, args))

    def missing(self, raw: str, path: Path, exc: FileNotFoundError) -> str:
        # Write creates a missing file and its directories; a FileNotFoundError means
        # something on the way vanished meanwhile, which the OS error says.
        return os_error_message(raw, exc, self.action)

    def _write(self, args: WriteParams, path: Path) -> ToolResult:
        raw = args.path
        existing = self._existing(raw, path)
        if existing is None:
            self._make_parent(raw, path)
        if args.mode == "append":
            return self._append(raw, args.content, path, existing)
        fmt = Format() if existing is None else self._probe(raw, path, existing)
        payload = fmt.encode(args.content)
        if existing is not None:
            self._unchanged_since(raw, path, existing)
        self.env.write_atomic(path, payload, pinned=True)
        self.tracker.stamp(path, self.env.stat(path), payload)
        verb = "Created" if existing is None else "Wrote"
        kept = fmt.kept(args.content)
        also = f" (kept {' and '.join(kept)})" if kept else ""
        action: Literal["created", "overwritten"] = "created" if existing is None else "overwritten"
        return ToolResult.ok(
            f"{verb} {raw}: {len(payload):,} bytes{also}.",
            structured=self._summary(path, action, payload, kept),
        )

    def _summary(
        self,
        path: Path,
        action: Literal["created", "overwritten", "appended"],
        payload: bytes,
        kept: list[str],
    ) -> WriteOutput:
        """The result as data (see `WriteOutput`)."""
        shown = shown_path(path, self.workspace)
        return WriteOutput(path=shown, action=action, bytes=len(payload), kept=kept)

    def _existing(self, raw: str, path: Path) -> FileStat | None:
        try:
            st = self.env.stat(path)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise FileToolFailed(self._parent_not_dir(raw, path)) from None
        if stat.S_ISDIR(st.st_mode):
            raise FileToolFailed(
                f'"{raw}" is a directory; Write writes files. Give the path of a file inside it.'
            )
        if not stat.S_ISREG(st.st_mode):
            raise FileToolFailed(f'"{raw}" is not a regular file (a device, socket or pipe).')
        return st

    def _unchanged_since(self, raw: str, path: Path, before: FileStat) -> None:
        """The file must still be the one that was checked, right before it is replaced."""
        try:
            now = self.env.stat(path)
        except FileNotFoundError:
            return
        if not same_stat(now, before):
            raise FileToolFailed(
                f'"{raw}" changed while it was being written (another program wrote to it); '
                "nothing was written. Read it again before replacing it."
            )

    def _parent_not_dir(self, raw: str, path: Path) -> str:
        blocker = path.parent
        while blocker != blocker.parent:
            try:
                st = self.env.stat(blocker)
            except OSError:
                blocker = blocker.parent
                continue
            if not stat.S_ISDIR(st.st_mode):
                break
            blocker = blocker.parent
        shown = shown_path(blocker, self.workspace)
        return (
            f'Cannot write "{raw}": "{shown}" is a file, not a directory, so nothing can be '
            "created inside it. Choose another path."
        )

    def _make_parent(self, raw: str, path: Path) -> None:
        try:
            self.env.make_dirs(path.parent, pinned=True)  # a swapped directory: PathChanged
        except (FileExistsError, NotADirectoryError):
            raise FileToolFailed(self._parent_not_dir(raw, path)) from None
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise FileToolFailed(
                    f'Cannot create the directory for "{raw}" ({path.parent}): permission '
                    "denied. Choose a path where this process may write."
                ) from None
            raise

    def _probe(self, raw: str, path: Path, st: FileStat) -> Format:
        """Refuse a stale overwrite; learn how the file is written now."""
        stamp = self.tracker.get(path)
        needs_content = (
            stamp is not None
            and not stamp.same_stat(st)
            and stamp.digest is not None
            and stamp.size == st.st_size
        )
        with self.env.open_read(path, pinned=True) as handle:
            if needs_content:
                data = handle.read()
                if self.tracker.is_stale(path, st, data):
                    raise FileToolFailed(stale_message(raw, "overwritten"))
                return _format_of(data)
            if self.tracker.is_stale(path, st):
                raise FileToolFailed(stale_message(raw, "overwritten"))
            return _scan_format(handle)

    def _append(self, raw: str, content: str, path: Path, existing: FileStat | None) -> ToolResult:
        fmt = Format()
        if existing is not None and existing.st_size:
            with self.env.open_read(path, pinned=True) as handle:
                head = handle.read(APPEND_PROBE_BYTES)
            probed = _format_of(head, partial=True)
            fmt = Format(probed.encoding, b"", probed.style)  # never a BOM mid-file
        stale_before = existing is not None and self.tracker.is_stale(path, existing)
        payload = fmt.encode(content)
        self.env.append(path, payload, pinned=True)
        if not stale_before:
            self.tracker.stamp(path, self.env.stat(path))
        kept = fmt.kept(content)
        also = f" (kept {' and '.join(kept)})" if kept else ""
        if existing is None:
            return ToolResult.ok(
                f"Created {raw}: {len(payload):,} bytes.",
                structured=self._summary(path, "created", payload, []),
            )
        return ToolResult.ok(
            f"Appended {len(payload):,} bytes to {raw}{also}.",
            structured=self._summary(path, "appended", payload, kept),
        )


def _format_of(data: bytes, *, partial: bool = False) -> Format:
    """The format of a file's bytes (all of them, or only its first bytes when `partial`)."""
    sniff = sniff_encoding(data[:SNIFF_BYTES])
    if not sniff.is_text:
        return Format()
    encoding: EncodingName = sniff.kind  # type: ignore[assignment]
    body = data[len(sniff.bom) :]
    if encoding == "utf-8":
        style = ending_stats(body).style
    else:
        body = body[: len(body) - len(body) % 2]
        style = ending_stats(body.decode(encoding, "replace")).style
    if partial and style == "mixed":
        style = "none"
    return Format(encoding, sniff.bom, style)


def _scan_format(handle: BufferedIOBase) -> Format:
    """The format of a file of any size, counting its line endings chunk by chunk."""
    head = handle.read(SNIFF_BYTES)
    sniff = sniff_encoding(head)
    if not sniff.is_text:
        return Format()
    if sniff.is_utf16:
        return _format_of(head + handle.read())
    counter = EndingCounter()
    counter.feed(head[len(sniff.bom) :])
    while True:
        chunk = handle.read(_SCAN_CHUNK)
        if not chunk:
            break
        counter.feed(chunk)
    return Format("utf-8", sniff.bom, counter.stats.style)
