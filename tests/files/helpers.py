"""Shared helpers for the file-tool tests: a runtime on a real temporary workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.execution import CallResult


async def call(rt: Runtime, name: str, args: Mapping[str, Any]) -> CallResult:
    return await rt.call(name, dict(args))


def text(result: CallResult) -> str:
    return result.text


def body_lines(result: CallResult) -> list[str]:
    """Read's numbered lines, without the numbers."""
    return [line.split("\t", 1)[1] for line in result.text.split("\n") if "\t" in line]


def tool_path(path: Path) -> Path:
    """`path` as the tools name it (in the env's view: `/workspace/...` in the rooted run),
    for looking it up in what the runtime keeps (the file tracker)."""
    return Path(str(path))


def git_init(root: Path) -> None:
    """Make `root` a git work tree, so ripgrep honours its .gitignore."""
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", os.fspath(root)], check=True)
    else:  # pragma: no cover - git is part of the test image
        (root / ".git").mkdir()


def set_mtime(path: Path, seconds: float) -> None:
    os.utime(path, (seconds, seconds))


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
