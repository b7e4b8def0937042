"""Write: create a file, replace all of it, or append to it.

Overwriting goes through a temporary file and a rename (the old file or the new one,
never half), keeping the replaced file's permission bits, encoding, byte-order mark and
CRLF line endings, so a model writing back what Read showed it changes only the text.
Appending adds to the end, in the file's encoding and line-ending style, and is cut
back if it fails.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from io import BufferedIOBase
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.files import FilesConfig
from deftly.contract import (
    Accesses,
    FileIODisplay,
    Tool,
    ToolContext,
    ToolExecution,
    ToolResult,
    ToolTraits,
    describe,
)
from deftly.env.base import ExecEnv
from deftly.policy import PathOp, Workspace, literal_rule
from deftly.tools.file.common import locate_file, os_error_message, shown_path
from deftly.tools.file.edit import stale_message
from deftly.tools.file.encoding import (
    SNIFF_BYTES,
    EncodingName,
    describe_encoding,
    encode_text,
    sniff_encoding,
)
from deftly.tools.file.line_endings import EndingCounter, Style, ending_stats, materialize
from deftly.tools.file.tracker import FileTracker

APPEND_PROBE_BYTES = 64 * 1024
_SCAN_CHUNK = 1 << 20


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


class WriteFailed(Exception):
    """A write that ends in an error result; the file was not touched."""


@dataclass(frozen=True, slots=True)
class Format:
    """How an existing file is written: its encoding, BOM and line-ending style."""

    encoding: EncodingName = "utf-8"
    bom: bytes = b""
    style: Style = "none"

    def encode(self, content: str) -> bytes:
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


class WriteTool(Tool[WriteParams]):
    name = "Write"
    params = WriteParams
    description = describe("write.md")
    traits = ToolTraits(destructive=True)

    def __init__(
        self, env: ExecEnv, workspace: Workspace, config: FilesConfig, tracker: FileTracker
    ):
        self.env = env
        self.workspace = workspace
        self.config = config
        self.tracker = tracker

    def description_vars(self) -> Mapping[str, object]:
        return {}

    def resolve(self, args: WriteParams) -> ToolExecution:
        path, matcher = locate_file(self.workspace, args.path, PathOp.WRITE)
        verb = "Appending to" if args.mode == "append" else "Writing"
        return ToolExecution(
            accesses=Accesses.write_file(path),
            display=FileIODisplay(operation="write", path=str(path), content=args.content),
            description=f"{verb} {args.path}",
            approval_rule=literal_rule(self.name, path),
            matches_rule=matcher,
            execute=partial(self._execute, args, path),
        )

    async def _execute(self, args: WriteParams, path: Path, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.write, args, path)

    def write(self, args: WriteParams, path: Path) -> ToolResult:
        try:
            return self._write(args, path)
        except WriteFailed as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(os_error_message(args.path, exc, "write"))

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
        self.env.write_atomic(path, payload)
        self.tracker.stamp(path, self.env.stat(path), payload)
        verb = "Created" if existing is None else "Wrote"
        kept = fmt.kept(args.content)
        also = f" (kept {' and '.join(kept)})" if kept else ""
        return ToolResult.ok(f"{verb} {raw}: {len(payload):,} bytes{also}.")

    def _existing(self, raw: str, path: Path) -> os.stat_result | None:
        try:
            st = self.env.stat(path)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise WriteFailed(self._parent_not_dir(raw, path)) from None
        if stat.S_ISDIR(st.st_mode):
            raise WriteFailed(
                f'"{raw}" is a directory; Write writes files. Give the path of a file inside it.'
            )
        if not stat.S_ISREG(st.st_mode):
            raise WriteFailed(f'"{raw}" is not a regular file (a device, socket or pipe).')
        return st

    def _unchanged_since(self, raw: str, path: Path, before: os.stat_result) -> None:
        """The file must still be the one that was checked, right before it is replaced."""
        try:
            now = self.env.stat(path)
        except FileNotFoundError:
            return
        if (now.st_size, now.st_mtime_ns, now.st_ino) != (
            before.st_size,
            before.st_mtime_ns,
            before.st_ino,
        ):
            raise WriteFailed(
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
            self.env.make_dirs(path.parent)
        except (FileExistsError, NotADirectoryError):
            raise WriteFailed(self._parent_not_dir(raw, path)) from None
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise WriteFailed(
                    f'Cannot create the directory for "{raw}" ({path.parent}): permission '
                    "denied. Choose a path where this process may write."
                ) from None
            raise

    def _probe(self, raw: str, path: Path, st: os.stat_result) -> Format:
        """Refuse a stale overwrite; learn how the file is written now."""
        stamp = self.tracker.get(path)
        needs_content = (
            stamp is not None
            and not stamp.same_stat(st)
            and stamp.digest is not None
            and stamp.size == st.st_size
        )
        with self.env.open_read(path) as handle:
            if needs_content:
                data = handle.read()
                if self.tracker.is_stale(path, st, data):
                    raise WriteFailed(stale_message(raw, "overwritten"))
                return _format_of(data)
            if self.tracker.is_stale(path, st):
                raise WriteFailed(stale_message(raw, "overwritten"))
            return _scan_format(handle)

    def _append(
        self, raw: str, content: str, path: Path, existing: os.stat_result | None
    ) -> ToolResult:
        fmt = Format()
        if existing is not None and existing.st_size:
            with self.env.open_read(path) as handle:
                head = handle.read(APPEND_PROBE_BYTES)
            probed = _format_of(head, partial=True)
            fmt = Format(probed.encoding, b"", probed.style)  # never a BOM mid-file
        stale_before = existing is not None and self.tracker.is_stale(path, existing)
        payload = fmt.encode(content)
        self.env.append(path, payload)
        if not stale_before:
            self.tracker.stamp(path, self.env.stat(path))
        kept = fmt.kept(content)
        also = f" (kept {' and '.join(kept)})" if kept else ""
        if existing is None:
            return ToolResult.ok(f"Created {raw}: {len(payload):,} bytes.")
        return ToolResult.ok(f"Appended {len(payload):,} bytes to {raw}{also}.")


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
