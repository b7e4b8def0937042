"""The scheduler's clocks: the system's, a manual one, and a file another process writes
(`DEFTLY_CRON_CLOCK=file:<path>`, epoch seconds, read at every look)."""

from __future__ import annotations

import time
from pathlib import Path

from deftly.features.cron.clock import FileClock, ManualClock, SystemClock, clock_from_env


def test_the_system_clock_is_the_time() -> None:
    before = time.time()
    assert before <= SystemClock().now() <= time.time()


def test_a_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(1000.0)
    assert clock.now() == 1000.0
    assert clock.advance(60) == 1060.0
    clock.set(5.5)
    assert clock.now() == 5.5


def test_a_file_clock_reads_the_first_line_afresh_each_time(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    path.write_text("1767225600\nanything after the first line is ignored\n")
    clock = FileClock(path)
    assert clock.now() == 1767225600.0
    path.write_text("1767225660.5")
    assert clock.now() == 1767225660.5
    path.write_text("1767225720000\n")  # milliseconds, as other agents write them
    assert clock.now() == 1767225720.0


def test_an_unreadable_file_keeps_the_last_good_time(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    clock = FileClock(path)
    before = time.time()
    assert clock.now() >= before  # never read: the system time
    path.write_text("1767225600")
    assert clock.now() == 1767225600.0
    path.write_text("not a time")
    assert clock.now() == 1767225600.0
    path.unlink()
    assert clock.now() == 1767225600.0


def test_the_variable_picks_the_clock(tmp_path: Path) -> None:
    assert isinstance(clock_from_env({}), SystemClock)
    chosen = clock_from_env({"DEFTLY_CRON_CLOCK": f"file:{tmp_path / 'c'}"})
    assert isinstance(chosen, FileClock) and chosen.path == tmp_path / "c"
    assert isinstance(clock_from_env({"DEFTLY_CRON_CLOCK": "fast"}), SystemClock)
