"""Edit: replace exact text in a file, atomically, keeping everything else as it was.

Matching is literal (no regex, no `$&` or `\\1`) against the model view of the file (a
pure-CRLF file is matched with LF), and the result is written back in the file's own
encoding, byte-order mark, line endings and permission bits, through a temporary file
and a rename. A refused or failed edit leaves the file byte for byte as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import DiffDisplay, Display, ToolExecution, ToolResult, ToolTraits, describe
from deftly.contract.output_schema import OutputSchema
from deftly.env.base import PathChanged
from deftly.features.files.base import FileToolFailed, TrackedFileTool
from deftly.features.files.common import human_size, shown_path, stale_message
from deftly.features.files.encoding import NotText, decode_text
from deftly.features.files.line_endings import Style, ending_stats, materialize, to_model_view
from deftly.features.files.near_miss import (
    describe_near_misses,
    find_near_misses,
    has_read_prefixes,
    strip_read_prefixes,
)
from deftly.features.files.outputs import EditOutput
from deftly.features.files.tracker import same_stat

MAX_LISTED = 10


class EditParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="The file to change: relative to the working directory, or absolute."
    )
    old_string: str = Field(
        min_length=1,
        description=(
            "The exact text to replace, copied from the file (without Read's line-number "
            "prefixes). Every space, tab and line break counts."
        ),
    )
    new_string: str = Field(
        description="The text to put in its place (may be empty, to delete old_string)."
    )
    replace_all: bool = Field(
        False,
        description="Replace every occurrence. When false, old_string must occur exactly once.",
    )


class EditTool(TrackedFileTool[EditParams]):
    """Edit: replace an exact string in a file (once, or every occurrence), written atomically."""

    name = "Edit"
    title = "Edit a file"
    params = EditParams
    description = describe("edit.md")
    traits = ToolTraits(destructive=True, writes_files=True)
    action = "edit"
    output_schema = OutputSchema(EditOutput)

    def description_vars(self) -> Mapping[str, object]:
        return {"MAX_BYTES": human_size(self.config.edit_max_bytes)}

    def resolve(self, args: EditParams) -> ToolExecution | ToolResult:
        if args.old_string == args.new_string:
            return ToolResult.error(
                "old_string and new_string are identical, so there is nothing to change. "
                "Put the new text in new_string."
            )
        execution = self.file_execution(
            args.path,
            partial(self._edit, args),
            f"Editing {args.path}",
            before=args.old_string,
            after=args.new_string,
        )
        path = Path(execution.accesses.written_paths[0]) if execution.accesses else None
        if path is None:
            return execution
        return replace(execution, preview=partial(self._preview, args, path))

    def _preview(self, args: EditParams, path: Path) -> Display | None:
        """The edit as a real diff of the file on disk, for a person asked to approve it:
        the file read and the edit made in memory (None, keeping the plain display, when
        it cannot be: the edit would fail and says why when it runs)."""
        try:
            st = self.env.stat(path)
            if st.st_size > self.config.edit_max_bytes:
                return None
            with self.env.open_read(path, pinned=True) as handle:
                data = handle.read()
            decoded = decode_text(data)
            style = ending_stats(decoded.text).style
            view = to_model_view(decoded.text, style)
            updated, *_ = _apply(args, view, style)
        except (OSError, NotText, FileToolFailed, PathChanged):
            return None
        return DiffDisplay(path=shown_path(path, self.workspace), before=view, after=updated)

    def edit(self, args: EditParams, path: Path) -> ToolResult:
        """Make the edit on `path` (already resolved by the path policy), in this thread.
        A failed edit leaves the file as it was."""
        return self.run_work(args.path, path, partial(self._edit, args))

    def missing(self, raw: str, path: Path, exc: FileNotFoundError) -> str:
        return super().missing(raw, path, exc) + " (To create a new file, use Write.)"

    def _edit(self, args: EditParams, path: Path) -> ToolResult:
        raw = args.path
        st = self.regular_file(
            path,
            directory=f'"{raw}" is a directory, not a file; Edit changes files.',
            special=f'"{raw}" is not a regular file (a device, socket or pipe).',
        )
        if st.st_size > self.config.edit_max_bytes:
            raise FileToolFailed(
                f'"{raw}" is {human_size(st.st_size)}, more than Edit loads '
                f"({human_size(self.config.edit_max_bytes)}). Change it with a streaming tool "
                "through Bash (e.g. `sed -i`), or split the file."
            )
        with self.env.open_read(path, pinned=True) as handle:
            before = self.env.stat_handle(handle)
            data = handle.read()
        if self.tracker.is_stale(path, before, data):
            raise FileToolFailed(stale_message(raw, "edited"))
        try:
            decoded = decode_text(data)
        except NotText as exc:
            raise FileToolFailed(_not_text_message(raw, exc)) from None
        style = ending_stats(decoded.text).style
        view = to_model_view(decoded.text, style)
        try:
            updated, positions, count, old = _apply(args, view, style)
        except _NotFound as exc:
            raise FileToolFailed(self._not_found(raw, view, exc.old)) from None
        except _NotUnique as exc:
            raise FileToolFailed(self._not_unique(raw, view, exc.old, exc.count)) from None
        new = args.new_string
        payload = decoded.encode(materialize(updated, style))
        try:
            now = self.env.stat(path)
        except FileNotFoundError:
            raise FileToolFailed(
                f'"{raw}" was deleted while it was being edited; nothing was written.'
            ) from None
        if not same_stat(now, before):
            raise FileToolFailed(
                f'"{raw}" changed while it was being edited (another program wrote to it); '
                "nothing was written. Read it again and redo the change."
            )
        self.env.write_atomic(path, payload, pinned=True)
        after = self.env.stat(path)
        self.tracker.stamp(path, after, payload)
        lines = _replaced_lines(view, positions, old, new)
        growth = new.count("\n") - old.count("\n")
        structured = EditOutput(
            path=shown_path(path, self.workspace),
            replacements=count,
            lines=lines,
            line_delta=growth * count,
            bytes=after.st_size,
        )
        return ToolResult.ok(self._done(raw, lines, count), structured=structured)

    # -- messages ------------------------------------------------------------------------

    def _done(self, raw: str, lines: list[int], count: int) -> str:
        noun = "occurrence" if count == 1 else "occurrences"
        return f"Edited {raw}: replaced {count} {noun} (at {_line_list(lines, count)})."

    def _not_found(self, raw: str, view: str, old: str) -> str:
        text = (
            f'old_string was not found in "{raw}". Matching is exact: every character, '
            "space, tab and line break must be as in the file now."
        )
        if has_read_prefixes(old):
            stripped = strip_read_prefixes(old)
            found = " (without them it does occur)" if stripped in view else ""
            return (
                f"{text} Its lines start with line numbers and a tab, as Read shows them; "
                f"those prefixes are not part of the file{found}. Remove them and try again."
            )
        hint = describe_near_misses(find_near_misses(view, old))
        if hint:
            return text + hint
        return (
            f"{text} The file may have changed since you read it: Read it again and copy "
            "the text exactly."
        )

    def _not_unique(self, raw: str, view: str, old: str, count: int) -> str:
        lines = [view.count("\n", 0, p) + 1 for p in _positions(view, old, MAX_LISTED)]
        return (
            f'old_string occurs {count} times in "{raw}" (at {_line_list(lines, count)}), so '
            "Edit cannot tell which one you mean. Add surrounding lines to old_string until "
            "it is unique, or set replace_all to true to replace every occurrence."
        )


class _NotFound(FileToolFailed):
    def __init__(self, old: str) -> None:
        super().__init__("old_string was not found")
        self.old = old


class _NotUnique(FileToolFailed):
    def __init__(self, old: str, count: int) -> None:
        super().__init__("old_string is not unique")
        self.old, self.count = old, count


def _apply(args: EditParams, view: str, style: Style) -> tuple[str, list[int], int, str]:
    """The edit made on the model view of a file: the new text, where the replacements
    start (the first few), how many there were, and old_string as matched."""
    old, new = args.old_string, args.new_string
    if style == "crlf":  # the view has LF only; a CRLF copied from the raw file means LF
        old = to_model_view(old, style)
    if not args.replace_all:
        first = view.find(old)
        if first < 0:
            raise _NotFound(old)
        second = view.find(old, first + len(old))
        if second >= 0:
            raise _NotUnique(old, view.count(old))
        return view.replace(old, new, 1), [first], 1, old  # one pass; old occurs once
    count = view.count(old)
    if count == 0:
        raise _NotFound(old)
    return view.replace(old, new), _positions(view, old, MAX_LISTED), count, old


def _replaced_lines(view: str, positions: list[int], old: str, new: str) -> list[int]:
    """Where the replacements (the first few) start in the edited file, as line numbers."""
    growth = new.count("\n") - old.count("\n")
    return [view.count("\n", 0, p) + 1 + i * growth for i, p in enumerate(positions)]


def _positions(view: str, old: str, limit: int) -> list[int]:
    out: list[int] = []
    start = 0
    while len(out) < limit:
        found = view.find(old, start)
        if found < 0:
            break
        out.append(found)
        start = found + len(old)
    return out


def _line_list(lines: list[int], count: int) -> str:
    if not lines:
        return "no lines"
    listed = ", ".join(str(n) for n in lines)
    more = f" and {count - len(lines)} more" if count > len(lines) else ""
    return f"line{'s' if len(lines) > 1 or count > 1 else ''} {listed}{more}"


def _not_text_message(raw: str, exc: NotText) -> str:
    if exc.kind == "binary":
        return f'"{raw}" is a binary file; Edit changes text files only. Nothing was changed.'
    return (
        f'"{raw}" is not valid UTF-8 or UTF-16 text ({exc}), so Edit cannot match text in it; '
        "nothing was changed. If it is in a legacy encoding, convert it first with Bash "
        f'(e.g. `iconv -f WINDOWS-1252 -t UTF-8 "{raw}"`), after checking with the user.'
    )
