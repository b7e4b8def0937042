"""Issue 10 §4: a file with more than one hard link may be another file elsewhere.

Appending to it changes every name it has, so manual mode asks, as for a path outside the
workspace; the atomic overwrite writes a new file and leaves the other names alone.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from deftly import Outcome, Runtime
from deftly.contract import Accesses, WriteHow
from deftly.policy import Link, Verdict


@pytest.fixture
def linked(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A committed file in the workspace with a second name outside it."""
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    inside = workspace / "log.txt"
    inside.write_text("line 1\n")
    subprocess.run([*git, "add", "log.txt"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True, timeout=60)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = elsewhere / "system.conf"
    os.link(inside, other)
    return inside, other


async def test_append_to_a_hard_linked_file_asks(linked: tuple[Path, Path]) -> None:
    inside, other = linked
    async with Runtime(inside.parent, config={}, plugins=False, mode="manual") as rt:
        await rt.call("Read", {"path": "log.txt"})  # even a file this session read
        args = {"path": "log.txt", "content": "line 2\n", "mode": "append"}
        decision = await rt.explain("Write", args)
        result = await rt.call("Write", args)
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.FALLBACK)
    assert "has 2 hard links" in decision.reason
    assert result.outcome is Outcome.VETOED
    assert other.read_text() == "line 1\n" == inside.read_text()


async def test_overwrite_breaks_the_link_and_stays_approved(linked: tuple[Path, Path]) -> None:
    inside, other = linked
    async with Runtime(inside.parent, config={}, plugins=False, mode="manual") as rt:
        result = await rt.call("Write", {"path": "log.txt", "content": "new\n"})
    assert not result.is_error, result.text
    assert inside.read_text() == "new\n"
    assert other.read_text() == "line 1\n"  # the other name kept the old file


async def test_append_to_a_single_link_file_is_approved(workspace: Path) -> None:
    async with Runtime(workspace, config={}, plugins=False, mode="manual") as rt:
        await rt.call("Write", {"path": "own.txt", "content": "a\n"})
        result = await rt.call("Write", {"path": "own.txt", "content": "b\n", "mode": "append"})
    assert not result.is_error, result.text
    assert (workspace / "own.txt").read_text() == "a\nb\n"


def test_write_declares_how_it_writes(workspace: Path) -> None:
    """The engine reads the declaration, not the tool's name."""
    from deftly.config.model import FilesConfig
    from deftly.env import LocalEnv
    from deftly.features.files.tracker import FileTracker
    from deftly.features.files.write import WriteParams, WriteTool
    from deftly.policy import Workspace

    tool = WriteTool(LocalEnv(), Workspace(workspace), FilesConfig(), FileTracker())
    target = str(workspace / "a.txt")
    append = tool.resolve(WriteParams(path="a.txt", content="x", mode="append"))
    overwrite = tool.resolve(WriteParams(path="a.txt", content="x"))
    assert append.accesses == Accesses.write_file(target, how=WriteHow.IN_PLACE)
    assert overwrite.accesses == Accesses.write_file(target, how=WriteHow.REPLACE)
