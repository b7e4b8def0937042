"""The output budget: text too long for one message goes to disk, the model gets a pointer.

The full text (up to a retention cap) is written to the session's spill directory; the
result becomes the path, the sizes, how to page it, and a preview of both ends.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from deftly.contract.result import ToolResult, is_all_text, output_text

log = logging.getLogger(__name__)

_STEM_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class OutputBudget:
    max_chars: int = 50_000
    retained_chars: int = 10_000_000
    head_chars: int = 4_096
    tail_chars: int = 1_024


def spill_stem(tool_name: str, call_id: str) -> str:
    stem = _STEM_UNSAFE.sub("_", f"{tool_name}-{call_id}").strip("_-.")[:80]
    return stem or "tool-result"


class Spiller:
    """Applies the budget to finished results."""

    def __init__(self, directory: Path, budget: OutputBudget | None = None):
        self.directory = directory
        self.budget = budget or OutputBudget()

    def apply(self, tool_name: str, call_id: str, result: ToolResult) -> ToolResult:
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
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(path, "x", encoding="utf-8", errors="surrogatepass", newline="") as handle:
                handle.write(text)
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
