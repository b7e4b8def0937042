"""The output budget: text too long for one message goes to disk, the model gets a pointer.

The full text (up to a retention cap) is written to the session's spill directory; the
result becomes the path, the sizes, how to page it, and a preview of both ends. The file is
written through the environment the model's tools use (a `FileWriter`, the `ExecEnv`), into
a directory in that environment's view, so the Read the model is pointed to finds it.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from pathlib import Path

from deftly.contract.fs import FileWriter
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult, is_all_text, output_text

log = logging.getLogger(__name__)

_STEM_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@frozen
class OutputBudget:
    """How much output one result may carry, and how much of a longer one is kept."""

    max_chars: int = 50_000
    retained_chars: int = 10_000_000
    head_chars: int = 4_096
    tail_chars: int = 1_024


def spill_stem(tool_name: str, call_id: str) -> str:
    """The start of a spill file's name: the tool and the call, in safe characters."""
    stem = _STEM_UNSAFE.sub("_", f"{tool_name}-{call_id}").strip("_-.")[:80]
    return stem or "tool-result"


class LocalFiles:
    """A `FileWriter` on this machine, for a `Spiller` given no environment."""

    def make_dirs(self, path: Path, *, pinned: bool = False, private: bool = False) -> None:
        """See `FileWriter.make_dirs` (`pinned` is not needed here)."""
        path.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """Write a new file (spill names are unique: an existing one is an error)."""
        with open(path, "xb") as handle:
            handle.write(data)


class Spiller:
    """Applies the budget to finished results."""

    def __init__(
        self,
        directory: Path,
        budget: OutputBudget | None = None,
        files: FileWriter | None = None,
    ):
        self.directory = directory
        """Where spill files go, in the view of the environment `files` writes to."""
        self.budget = budget or OutputBudget()
        self.files: FileWriter = files or LocalFiles()

    def apply(self, tool_name: str, call_id: str, result: ToolResult) -> ToolResult:
        """The result as the model gets it: unchanged when it fits, else a pointer to the
        spilled text with a preview of both ends."""
        if result.spill_exempt or not is_all_text(result.output):
            return result
        text = output_text(result.output)
        if len(text) <= self.budget.max_chars:
            return result
        kept = text[: self.budget.retained_chars]
        path = self._save(f"{spill_stem(tool_name, call_id)}-{uuid.uuid4().hex[:12]}.txt", kept)
        return result.with_(output=self._pointer(text, kept, path), truncated=True)

    def _save(self, name: str, text: str) -> Path | None:
        path = self.directory / name
        try:
            self.files.make_dirs(self.directory, private=True)
            self.files.write_atomic(path, text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            log.warning("could not save a long output to %s: %s", path, exc)
            return None
        return path

    def _pointer(self, text: str, kept: str, path: Path | None) -> str:
        budget = self.budget
        size = f"{len(text):,} characters ({len(text.encode('utf-8', 'surrogatepass')):,} bytes)"
        lines = [
            f"The output is too long for one message: {size}, "
            f"over the {budget.max_chars:,}-character budget."
        ]
        if path is not None:
            lines.append(f"output_path: {os.fspath(path)}")
            if len(kept) < len(text):
                lines.append(
                    f"The file holds the first {len(kept):,} characters; the rest was dropped."
                )
            lines.append(
                "next_step: page through output_path with Read (line_offset, n_lines) "
                "or search it with Grep."
            )
        else:
            lines.append(
                "The full output could not be saved to disk, so only the preview below exists; "
                "narrow the command or query to get less output."
            )
        head = text[: budget.head_chars]
        tail = text[-budget.tail_chars :] if budget.tail_chars else ""
        lines += ["", f"--- first {len(head):,} characters ---", head]
        if tail and len(text) > len(head):
            lines += [f"--- last {len(tail):,} characters ---", tail]
        return "\n".join(lines)
