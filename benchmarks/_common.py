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
