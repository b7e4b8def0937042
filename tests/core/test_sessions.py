"""Session directories: held while a runtime runs, removed when they kept nothing, and
pruned once untouched for `[session] keep_days` unless another runtime holds them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.session import IN_USE, SessionClaim, prune_sessions
from tests.helpers import BigTool

DAY = 86_400.0


def age(path: Path, days: float) -> None:
    """Make everything under `path` look untouched for `days`."""
    when = time.time() - days * DAY
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.utime(os.path.join(root, name), (when, when))
    os.utime(path, (when, when))


def old_session(sessions: Path, name: str, days: float) -> Path:
    path = sessions / name
    (path / "spill").mkdir(parents=True)
    (path / "spill" / "result.txt").write_text("kept output")
    age(path, days)
    return path


HOLDER = """
import sys
from pathlib import Path
from deftly.session import SessionClaim
claim = SessionClaim(Path(sys.argv[1]))
claim.claim()
print("held", flush=True)
sys.stdin.read()
"""


async def test_a_runtime_holds_its_session_and_removes_it_if_it_kept_nothing(
    make_runtime: Any,
) -> None:
    rt: Runtime = await make_runtime()
    assert (rt.session_dir / IN_USE).exists()
    await rt.close()
    assert not rt.session_dir.exists()


async def test_a_session_with_spilled_output_is_kept_after_close(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(tools=[BigTool], config={"output": {"max_chars": 1000}})
    result = await rt.call("Big", {"chars": 5000})
    assert result.truncated
    await rt.close()
    assert any((rt.session_dir / "spill").iterdir())


async def test_old_sessions_are_pruned_but_not_held_or_recent_ones(make_runtime: Any) -> None:
    first: Runtime = await make_runtime()
    sessions = first.session_dir.parent
    stale = old_session(sessions, "20260101-000000-aaaaaa", days=30)
    recent = old_session(sessions, "20261129-000000-bbbbbb", days=1)
    held = old_session(sessions, "20260102-000000-cccccc", days=30)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(held)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        age(held, days=30)
        second: Runtime = await make_runtime()  # its start prunes
        assert second.session_dir.parent == sessions
        assert not stale.exists()
        assert recent.exists() and held.exists() and first.session_dir.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    third: Runtime = await make_runtime()  # nobody holds it any more
    assert not held.exists() and recent.exists()
    assert third.session_dir.exists()


async def test_keep_days_zero_keeps_every_session(make_runtime: Any) -> None:
    first: Runtime = await make_runtime()
    stale = old_session(first.session_dir.parent, "20250101-000000-dddddd", days=400)
    await make_runtime(config={"session": {"keep_days": 0}})
    assert stale.exists()


def test_prune_never_follows_a_link_out_of_the_sessions(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "file.txt").write_text("do not delete")
    age(precious, days=100)
    (sessions / "20250101-000000-eeeeee").symlink_to(precious)
    keep = sessions / "current"
    removed = prune_sessions(sessions, older_than_days=1, keep=keep)
    assert removed == []
    assert (precious / "file.txt").read_text() == "do not delete"


def test_a_claim_is_shared_and_the_last_release_removes_it(tmp_path: Path) -> None:
    # Issue 12 makes the claim shared (several agents hold one session); it was exclusive.
    path = tmp_path / "s"
    one = SessionClaim(path)
    one.claim()
    other = SessionClaim(path)
    other.claim()
    one.release()
    assert (path / IN_USE).exists()  # still held by the other
    other.release()
    assert not path.exists()
