"""Write creates missing parent directories through the pinned directory handle (issue 10
§4): a directory swapped for a link while the Write waited leaves nothing created where
the link leads, and the result says the path changed. The swap happens in a before-hook,
after the path policy checked the call and before it runs (see tests/safety/test_path_swap.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.env import LocalEnv, PathChanged
from deftly.env.local import _open_below


def _swap_for_link(directory: Path, target: Path) -> None:
    os.rename(directory, directory.with_name(directory.name + ".moved"))
    os.symlink(target, directory)


def _everything_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.mark.parametrize("outside_has", [[], ["b"], ["b/c"]])
async def test_write_makes_no_directory_outside_after_a_swap(
    make_runtime: Any, workspace: Path, outside_has: list[str]
) -> None:
    (workspace / "a").mkdir()
    outside = workspace.parent / "outside"
    outside.mkdir()
    for rel in outside_has:  # however far the outside tree matches the path
        (outside / rel).mkdir(parents=True)
    before = _everything_under(outside)
    rt: Runtime = await make_runtime()

    async def swap(ctx: Any) -> None:
        if ctx.call.name == "Write":
            _swap_for_link(workspace / "a", outside)

    rt.before_hooks.add("swap", swap)
    result = await rt.call("Write", {"path": "a/b/c/new.txt", "content": "hello\n"})
    assert result.is_error, result.text
    assert "changed after it was checked" in result.text and "Nothing was written" in result.text
    assert _everything_under(outside) == before  # no b, no b/c, no new.txt out there
    assert _everything_under(workspace / "a.moved") == []


async def test_write_still_creates_missing_parents(make_runtime: Any, workspace: Path) -> None:
    (workspace / "a").mkdir()
    rt: Runtime = await make_runtime()
    result = await rt.call("Write", {"path": "a/b/c/new.txt", "content": "hello\n"})
    assert not result.is_error, result.text
    assert (workspace / "a/b/c/new.txt").read_text() == "hello\n"
    fresh = await rt.call("Write", {"path": "x/y/z.txt", "content": "z"})
    assert not fresh.is_error and (workspace / "x/y/z.txt").read_text() == "z"


async def test_a_file_in_the_way_is_still_reported_as_such(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a").write_text("a file")
    rt: Runtime = await make_runtime()
    result = await rt.call("Write", {"path": "a/b/new.txt", "content": "x"})
    assert result.is_error and "is a file, not a directory" in result.text


def test_pinned_make_dirs_refuses_a_swapped_ancestor(tmp_path: Path) -> None:
    env = LocalEnv()
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = (ws / "a" / "b" / "c").resolve()
    _swap_for_link(ws / "a", outside)
    with pytest.raises(PathChanged):
        env.make_dirs(target, pinned=True)
    assert list(outside.iterdir()) == []
    env.make_dirs(ws / "a" / "b", pinned=False)  # unpinned still follows links
    assert (outside / "b").is_dir()


def test_pinned_make_dirs_refuses_a_link_made_in_between(tmp_path: Path) -> None:
    """A missing directory that turns up as a link (planted after the check found it
    missing, or between the mkdir and the open) is never followed."""
    env = LocalEnv()
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws / "b")
    with pytest.raises(PathChanged):
        env.make_dirs(ws / "b" / "c", pinned=True)
    # the step that walks down after each mkdir, on its own (the race is too short to win
    # from a test; this is the same call the walk makes)
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(PathChanged):
            _open_below(fd, "b", ws / "b")
    finally:
        os.close(fd)
    assert list(outside.iterdir()) == []
