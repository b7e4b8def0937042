"""Desktop notifications and the terminal bell: a fake `notify-send` (a real program first
on PATH) records what it was given; nothing is spawned without a display, or for a `low`
notification; one that hangs is killed and reaped."""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

import pytest

from deftly.contract.identity import Identity
from deftly.execution.events import RuntimeNotice
from deftly.features.notify import DesktopNotifier, Notification, NotifyAlerts
from deftly.features.notify.desktop import DISPLAY_VARIABLES
from tests.notify.fake import fake_notify_send, recorded


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DISPLAY_VARIABLES}
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def _notice(note: Notification, agent_id: str = "main") -> RuntimeNotice:
    return RuntimeNotice("notify", note.text, note, Identity("s1", agent_id, 1))


@pytest.mark.parametrize("variable", DISPLAY_VARIABLES)
def test_it_is_found_on_path_when_a_display_is_set(tmp_path: Path, variable: str) -> None:
    fake_notify_send(tmp_path, sys.executable)
    found = DesktopNotifier.find(_env(tmp_path, **{variable: ":1"}))
    assert found is not None and found.program == str(tmp_path / "bin" / "notify-send")


def test_without_a_display_or_without_the_program_there_is_none(tmp_path: Path) -> None:
    fake_notify_send(tmp_path, sys.executable)
    assert DesktopNotifier.find(_env(tmp_path)) is None
    assert DesktopNotifier.find(_env(tmp_path, DISPLAY="")) is None
    assert DesktopNotifier.find({"PATH": str(tmp_path / "nothing"), "DISPLAY": ":1"}) is None


async def test_alerts_ring_the_bell_and_spawn_notify_send_by_urgency(tmp_path: Path) -> None:
    record = fake_notify_send(tmp_path, sys.executable)
    desktop = DesktopNotifier.find(_env(tmp_path, DISPLAY=":1"))
    assert desktop is not None
    bell = io.StringIO()
    alerts = NotifyAlerts(shown="a line", bell=bell, desktop=desktop)
    quiet = Notification("just so you know", urgency="low")
    normal = Notification("-n starts like an option", title="Build")
    loud = Notification("The deploy needs you", urgency="high")
    for note in (quiet, normal, loud):
        alerts(_notice(note))
    await desktop.aclose(grace=60)
    assert quiet.channels == ["a line"]
    assert normal.channels == [
        "a line",
        "the terminal bell",
        "a desktop notification (notify-send)",
    ]
    assert bell.getvalue() == "\a\a"
    argvs = sorted((run["argv"] for run in recorded(record)), key=str)
    assert argvs == sorted(
        [
            ["--urgency=normal", "--app-name=deftly", "--", "Build", "-n starts like an option"],
            ["--urgency=critical", "--app-name=deftly", "--", "deftly", "The deploy needs you"],
        ],
        key=str,
    )


async def test_the_line_is_claimed_only_for_the_agent_the_renderer_shows() -> None:
    alerts = NotifyAlerts(shown="a line in the terminal")
    other = Notification("from a sub-agent")
    alerts(_notice(other, agent_id="helper-1"))
    assert other.channels == []


async def test_a_notify_send_that_hangs_is_killed_and_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = fake_notify_send(tmp_path, sys.executable)
    monkeypatch.setenv("FAKE_NOTIFY_HANG", "1")
    desktop = DesktopNotifier(str(tmp_path / "bin" / "notify-send"), timeout=0.5)
    assert desktop.send(Notification("stuck"))
    await desktop.aclose(grace=60)  # returns once the timeout has killed it
    [run] = recorded(record)
    assert not Path(f"/proc/{run['pid']}").exists()


async def test_closing_kills_and_reaps_what_is_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = fake_notify_send(tmp_path, sys.executable)
    monkeypatch.setenv("FAKE_NOTIFY_HANG", "1")
    desktop = DesktopNotifier(str(tmp_path / "bin" / "notify-send"), timeout=600)
    assert desktop.send(Notification("stuck"))
    for _ in range(500):  # until the program runs (it writes first)
        if recorded(record):
            break
        await asyncio.sleep(0.02)
    [run] = recorded(record)
    assert Path(f"/proc/{run['pid']}").exists()
    await desktop.aclose(grace=0)
    assert not Path(f"/proc/{run['pid']}").exists()


def test_without_an_event_loop_nothing_is_spawned(tmp_path: Path) -> None:
    record = fake_notify_send(tmp_path, sys.executable)
    desktop = DesktopNotifier(str(tmp_path / "bin" / "notify-send"))
    assert desktop.send(Notification("no loop")) is False
    assert recorded(record) == []
