"""A path checked by the policy and then swapped for a symbolic link before the tool uses
it (a time-of-check to time-of-use race) is refused: nothing is read, nothing is written
where the link leads.

The swap happens in a before-hook, which runs after the path policy resolved the call
and before the tool executes: the very window an outside process would have to win.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.env import LocalEnv, PathChanged

SECRET_TEXT = "outside-secret-content\n"


def make_layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with docs/note.txt, and a directory outside it with a same-named file."""
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "note.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text(SECRET_TEXT)
    return ws, outside


def swap_for_link(directory: Path, target: Path) -> None:
    os.rename(directory, directory.with_name(directory.name + ".moved"))
    os.symlink(target, directory)


def test_pinned_open_refuses_a_directory_swapped_for_a_link(tmp_path: Path) -> None:
    ws, outside = make_layout(tmp_path)
    env = LocalEnv()
    real = (ws / "docs" / "note.txt").resolve()
    with env.open_read(real, pinned=True) as handle:
        assert handle.read() == b"inside\n"
    swap_for_link(ws / "docs", outside)
    with pytest.raises(PathChanged):
        env.open_read(real, pinned=True)
    with pytest.raises(PathChanged):
        env.write_atomic(real, b"overwritten\n", pinned=True)
    with pytest.raises(PathChanged):
        env.append(real, b"appended\n", pinned=True)
    assert (outside / "note.txt").read_text() == SECRET_TEXT
    assert sorted(p.name for p in outside.iterdir()) == ["note.txt"]  # no scratch file left
    # unpinned calls still follow links, as plain file functions do
    with env.open_read(real) as handle:
        assert handle.read() == SECRET_TEXT.encode()


def test_pinned_use_refuses_a_file_swapped_for_a_link(tmp_path: Path) -> None:
    ws, outside = make_layout(tmp_path)
    env = LocalEnv()
    real = (ws / "docs" / "note.txt").resolve()
    real.unlink()
    os.symlink(outside / "note.txt", real)
    for attempt in (
        lambda: env.open_read(real, pinned=True),
        lambda: env.write_atomic(real, b"x", pinned=True),
        lambda: env.append(real, b"x", pinned=True),
    ):
        with pytest.raises(PathChanged):
            attempt()
    assert (outside / "note.txt").read_text() == SECRET_TEXT
    assert real.is_symlink()  # the link itself was not replaced either


def test_atomic_write_replaces_and_keeps_the_mode_without_leaving_scratch(tmp_path: Path) -> None:
    env = LocalEnv()
    target = tmp_path / "f.txt"
    target.write_text("old")
    target.chmod(0o640)
    env.write_atomic(target, b"new", pinned=True)
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o640
    env.write_atomic(tmp_path / "fresh.txt", b"made", pinned=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "fresh.txt"]


@pytest.mark.parametrize(
    ("tool", "arguments", "nothing"),
    [
        ("Read", {"path": "docs/note.txt"}, "read"),
        ("Write", {"path": "docs/note.txt", "content": "overwritten\n"}, "written"),
        ("Write", {"path": "docs/note.txt", "content": "more\n", "mode": "append"}, "written"),
        ("Edit", {"path": "docs/note.txt", "old_string": "x", "new_string": "y"}, "changed"),
    ],
)
async def test_tools_refuse_a_path_swapped_after_the_check(
    make_runtime: Any, workspace: Path, tool: str, arguments: dict[str, Any], nothing: str
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "note.txt").write_text("inside\n")
    outside = workspace.parent / f"outside-{tool}-{nothing}"
    outside.mkdir()
    (outside / "note.txt").write_text("x" + SECRET_TEXT)
    rt: Runtime = await make_runtime()
    if tool in ("Write", "Edit"):
        await rt.call("Read", {"path": "docs/note.txt"})  # the stale-read guard is satisfied

    async def swap(ctx: Any) -> None:
        if ctx.call.name == tool:
            swap_for_link(workspace / "docs", outside)

    rt.before_hooks.add("swap", swap)
    result = await rt.call(tool, arguments)
    assert result.is_error, result.text
    assert "changed after it was checked" in result.text and f"Nothing was {nothing}" in result.text
    assert SECRET_TEXT not in result.text
    assert (outside / "note.txt").read_text() == "x" + SECRET_TEXT
    assert sorted(p.name for p in outside.iterdir()) == ["note.txt"]
