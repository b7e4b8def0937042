"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def isolate() -> Path:
    """Keep benchmark sessions out of the user's data directory."""
    home = Path(tempfile.mkdtemp(prefix="deftly-bench-"))
    os.environ["DEFTLY_HOME"] = str(home / "data")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    return home


def cached_bytecode(env: dict[str, str], cache: Path) -> dict[str, str]:
    """`env` with bytecode written to and read from `cache`, the way an installed program
    runs: the sandbox sets PYTHONDONTWRITEBYTECODE, which would make every spawn compile
    deftly's sources again (the installed SDK's were compiled by pip). Warm `cache` with one
    untimed run first."""
    out = dict(env)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    out["PYTHONPYCACHEPREFIX"] = str(cache)
    return out


def best_of(repeats: int, fn: Callable[[], float]) -> float:
    """The fastest of several runs: the least disturbed by the rest of the machine."""
    return min(fn() for _ in range(repeats))


def median_of(repeats: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(repeats))


def clock() -> float:
    return time.perf_counter()


def row(label: str, value: float, unit: str, floor: float | None = None, target: str = "") -> None:
    ratio = f"{value / floor:6.2f}x floor" if floor else ""
    print(f"  {label:<58} {value:10.3f} {unit:<4} {ratio:<16} {target}")
