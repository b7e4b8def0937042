"""The results file: one JSON line per finished task, appended (and flushed) the moment it
finishes, so a crash loses nothing; a rerun skips the ids it already holds."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FIELDS = (
    "id",
    "status",
    "stop_reason",
    "text",
    "diff",
    "usage",
    "steps",
    "seconds",
    "transcript",
    "error",
    "attempts",
)
"""A result line's fields, in order."""


def finished_ids(path: Path) -> set[str]:
    """The ids that already have a result line in `path` (a torn last line does not count)."""
    if not path.exists():
        return set()
    done = set()
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                done.add(record["id"])
    return done


def transcript_records(text: str | None) -> list[Any] | None:
    """A transcript's JSONL as its records (a torn line skipped)."""
    if text is None:
        return None
    records = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


class ResultWriter:
    """Appends result lines to the results file; transcripts inline, or written to
    `transcripts/<id>.jsonl` with the result holding the path."""

    def __init__(self, path: Path, transcripts: Path | None = None) -> None:
        self.path = path
        self.transcripts = transcripts
        self.written = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        if transcripts is not None:
            transcripts.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab", buffering=0)
        end = self._file.seek(0, os.SEEK_END)
        if end:
            with path.open("rb") as raw:
                raw.seek(end - 1)
                if raw.read(1) != b"\n":
                    self._file.write(b"\n")  # end a line torn by a crash

    def write(self, outcome: Mapping[str, Any], attempts: int = 1) -> dict[str, Any]:
        """Write one task's result line; the record written."""
        record = {name: outcome.get(name) for name in FIELDS}
        record["attempts"] = attempts
        text = outcome.get("transcript")
        if self.transcripts is not None and text is not None:
            target = self.transcripts / f"{_file_stem(str(outcome['id']))}.jsonl"
            target.write_text(text, encoding="utf-8")
            record["transcript"] = str(target.resolve())
        else:
            record["transcript"] = transcript_records(text)
        line = json.dumps(record, ensure_ascii=False) + "\n"
        self._file.write(line.encode("utf-8"))  # one write(2): a crash tears at most this line
        self.written += 1
        return record

    def close(self) -> None:
        """Flush the file to disk and close it."""
        if not self._file.closed:
            os.fsync(self._file.fileno())
            self._file.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _file_stem(task_id: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._") or "task"
    if stem != task_id:
        stem += "-" + hashlib.sha256(task_id.encode()).hexdigest()[:8]
    return stem
