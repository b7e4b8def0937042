"""A batch remembers its path look-ups (see `deftly.policy.paths.one_look`); a link swapped
between two calls of one batch still never lets them reach outside the workspace, and a
call that may write makes the calls prepared after it look again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from deftly import Runtime

SECRET_TEXT = "outside-secret-content"


def layout(workspace: Path) -> Path:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "note.txt").write_text("inside\n")
    outside = workspace.parent / "outside-cache"
    outside.mkdir()
    (outside / "note.txt").write_text(SECRET_TEXT + "\n")
    return outside


def swap_for_link(directory: Path, target: Path) -> None:
    os.rename(directory, directory.with_name(directory.name + ".moved"))
    os.symlink(target, directory)


async def test_a_link_swapped_between_two_reads_of_one_batch_leads_nowhere_outside(
    make_runtime: Any, workspace: Path
) -> None:
    outside = layout(workspace)
    rt: Runtime = await make_runtime()

    async def swap(ctx: Any) -> None:  # after the first call's checks, before the second's
        if ctx.call.id == "first":
            swap_for_link(workspace / "docs", outside)

    rt.before_hooks.add("swap", swap)
    read = {"path": "docs/note.txt"}
    results = await rt.run_batch(
        [
            {"id": "first", "name": "Read", "arguments": read},
            {"id": "second", "name": "Read", "arguments": read},
        ]
    )
    for result in results:
        assert SECRET_TEXT not in result.result.output, result.result.output
        assert result.result.is_error  # both refused: the checked path now leads elsewhere
    assert "changed after it was checked" in results[1].result.output


async def test_a_writing_call_makes_later_calls_of_the_batch_look_again(
    make_runtime: Any, workspace: Path
) -> None:
    """Read docs/note.txt, Write a new file (a call that may write; while it is prepared,
    docs becomes a link to other/), Read docs/note.txt again: the second Read is resolved
    afresh, not from the first one's look-up, so it reads other/note.txt."""
    layout(workspace)
    (workspace / "other").mkdir()
    (workspace / "other" / "note.txt").write_text("other\n")
    rt: Runtime = await make_runtime()

    async def relink(ctx: Any) -> None:
        if ctx.call.name == "Write":
            swap_for_link(workspace / "docs", workspace / "other")

    rt.before_hooks.add("relink", relink)
    read = {"path": "docs/note.txt"}
    results = await rt.run_batch(
        [
            {"id": "r1", "name": "Read", "arguments": read},
            {"id": "w", "name": "Write", "arguments": {"path": "new.txt", "content": "x\n"}},
            {"id": "r2", "name": "Read", "arguments": read},
        ]
    )
    assert not results[1].result.is_error, results[1].result.output
    assert "other" in results[2].result.output, results[2].result.output
