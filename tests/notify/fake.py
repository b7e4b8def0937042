"""A fake `notify-send` first on PATH: a real program that records its arguments."""

from __future__ import annotations

import json
from pathlib import Path

SCRIPT = """#!{python}
import json, os, sys, time
with open({record!r}, "a") as out:
    out.write(json.dumps({{"pid": os.getpid(), "argv": sys.argv[1:]}}) + "\\n")
if os.environ.get("FAKE_NOTIFY_HANG"):
    time.sleep(600)
"""


def fake_notify_send(folder: Path, python: str) -> Path:
    """Install `folder/bin/notify-send`; returns the file it appends one JSON line to per
    run (its pid and arguments)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    record = folder / "notify-send.jsonl"
    program = bin_dir / "notify-send"
    program.write_text(SCRIPT.format(python=python, record=str(record)))
    program.chmod(0o755)
    return record


def recorded(record: Path) -> list[dict[str, object]]:
    """Every run of the fake so far."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]
