"""The collector pause while a command starts: paused by the console script, back on
once the runtime is built or the command's loop first waits, and never left off."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deftly.cli import startup
from deftly.cli.common import run_async
from tests.conftest import subprocess_env

REPORT_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: sys.stderr.write(
    f"collecting={{gc.isenabled()}} frozen={{gc.get_freeze_count()}}\\n"))
sys.argv = ["deftly", *{args!r}]
from deftly.cli.entry import main
main()
"""


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    startup.resume()
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


def console_script(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", REPORT_AT_EXIT.format(args=list(args))],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=workspace,
        timeout=60,
        check=False,
    )


def test_a_command_that_builds_a_runtime_collects_again_after(workspace: Path) -> None:
    result = console_script(workspace, "tools", "--json")
    assert result.returncode == 0, result.stderr
    assert '"name": "Read"' in result.stdout
    collecting, frozen = result.stderr.strip().splitlines()[-1].split()
    assert collecting == "collecting=True"
    assert int(frozen.removeprefix("frozen=")) > 10_000  # start-up's objects, set aside


def test_help_ends_without_collecting_and_without_harm(workspace: Path) -> None:
    result = console_script(workspace, "--help")
    assert result.returncode == 0 and "serve" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "collecting=False frozen=0"


@pytest.mark.usefixtures("collector_restored")
def test_the_loop_turns_collection_back_on_at_its_first_wait() -> None:
    seen: list[bool] = []

    async def command() -> None:
        seen.append(gc.isenabled())
        await asyncio.sleep(0)
        seen.append(gc.isenabled())

    startup.pause()
    run_async(command)
    assert seen == [False, True]


@pytest.mark.usefixtures("collector_restored")
def test_resume_never_turns_on_a_collector_someone_else_turned_off() -> None:
    gc.disable()
    startup.pause()
    startup.resume()
    assert not gc.isenabled()
    gc.enable()
    startup.pause()
    assert not gc.isenabled()
    startup.resume()
    assert gc.isenabled()
