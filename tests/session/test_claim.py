"""The shared session claim: several holders at once (in this process and in others),
pruning skips any held session, and only the last holder removes an empty directory."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deftly.session import IN_USE, SessionClaim, prune_sessions
from tests.conftest import subprocess_env
from tests.core.test_sessions import age

HOLDER = """
import sys
from pathlib import Path
from deftly.session import SessionClaim
claim = SessionClaim(Path(sys.argv[1]))
claim.claim()
print("held", flush=True)
sys.stdin.readline()
claim.release()
print("released", flush=True)
sys.stdin.read()
"""


class Holder:
    """A real other process holding a session: `release()` lets go, `stop()` ends it."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "held\n"

    def release(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "released\n"

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    made: list[Holder] = []
    yield made
    for holder in made:
        holder.stop()


def prune_all(sessions: Path) -> list[Path]:
    return prune_sessions(sessions, older_than_days=1, keep=sessions / "none")


def test_two_claims_in_one_process_hold_one_session(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    path = sessions / "s1"
    first, second = SessionClaim(path), SessionClaim(path)
    first.claim()
    second.claim()
    assert first.held and second.held
    age(path, days=30)
    assert prune_all(sessions) == []
    first.release()
    assert (path / IN_USE).exists()  # the second still holds it
    age(path, days=30)
    assert prune_all(sessions) == []
    second.release()
    assert not path.exists()  # it kept nothing, and no one holds it any more


def test_a_claim_shared_with_another_process(tmp_path: Path, holders: list[Holder]) -> None:
    sessions = tmp_path / "sessions"
    path = sessions / "s1"
    holder = Holder(path)
    holders.append(holder)
    mine = SessionClaim(path)
    mine.claim()  # the other process holds it too: no error
    age(path, days=30)
    assert prune_all(sessions) == []
    mine.release()
    assert (path / IN_USE).exists()  # the other process still holds it
    age(path, days=30)
    assert prune_all(sessions) == []
    holder.release()  # the last holder: the empty directory goes
    assert not path.exists()


def test_the_other_process_releasing_leaves_our_hold(tmp_path: Path, holders: list[Holder]) -> None:
    sessions = tmp_path / "sessions"
    path = sessions / "s1"
    holder = Holder(path)
    holders.append(holder)
    mine = SessionClaim(path)
    mine.claim()
    holder.release()
    assert (path / IN_USE).exists()
    age(path, days=30)
    assert prune_all(sessions) == []
    mine.release()
    assert not path.exists()


def test_a_session_that_kept_something_stays_after_the_last_release(tmp_path: Path) -> None:
    path = tmp_path / "s1"
    claim = SessionClaim(path)
    claim.claim()
    (path / "state").mkdir()
    claim.release()
    assert (path / "state").is_dir()
    assert not claim.held


def test_a_claim_waits_for_an_exclusive_lock_then_fails(tmp_path: Path) -> None:
    path = tmp_path / "s1"
    path.mkdir()
    fd = os.open(path / IN_USE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a pruner, or an older deftly, holds it
        with pytest.raises(OSError, match="locked exclusively"):
            SessionClaim(path).claim(timeout=0.05)
    finally:
        os.close(fd)


def test_a_claim_racing_a_removal_lands_in_a_fresh_directory(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    path = sessions / "s1"
    (path / "spill").mkdir(parents=True)
    fd = os.open(path / IN_USE, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a pruner holds it and is removing it
    claim = SessionClaim(path)
    errors: list[BaseException] = []

    def take() -> None:
        try:
            claim.claim()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=take)
    thread.start()
    os.rename(path, sessions / ".pruning-s1")
    shutil.rmtree(sessions / ".pruning-s1")
    os.close(fd)
    thread.join(timeout=30)
    assert not errors and claim.held
    assert path.is_dir() and not (path / "spill").exists()  # a fresh directory
    age(path, days=30)
    assert prune_all(sessions) == []  # and the claim really holds it
    claim.release()
    assert not path.exists()


def test_pruning_removes_an_old_free_session_and_leftovers_of_a_removal(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    old = sessions / "s-old"
    (old / "spill").mkdir(parents=True)
    (old / "spill" / "out.txt").write_text("x")
    leftover = sessions / ".pruning-s-gone-1234"
    (leftover / "spill").mkdir(parents=True)
    age(old, days=30)
    assert prune_all(sessions) == [old]
    assert not old.exists() and not leftover.exists()
    assert [entry.name for entry in sessions.iterdir()] == []


def test_holders_and_a_pruner_racing_never_hold_a_removed_directory(tmp_path: Path) -> None:
    from deftly.session.paths import _is_current

    sessions = tmp_path / "sessions"
    path = sessions / "s1"
    problems: list[str] = []
    holders_done = threading.Event()

    def hold_and_release() -> None:
        for _ in range(300):
            claim = SessionClaim(path)
            try:
                claim.claim()
            except OSError as exc:
                problems.append(repr(exc))
                continue
            assert claim._fd is not None
            if not _is_current(claim._fd, path / IN_USE):
                problems.append("held a file no longer in the session directory")
            claim.release()

    def prune_until_done() -> None:
        while not holders_done.is_set():
            prune_sessions(sessions, older_than_days=-1, keep=sessions / "none")  # all "old"

    pruner = threading.Thread(target=prune_until_done)
    holders = [threading.Thread(target=hold_and_release) for _ in range(3)]
    pruner.start()
    for thread in holders:
        thread.start()
    for thread in holders:
        thread.join(timeout=120)
    holders_done.set()
    pruner.join(timeout=120)
    assert problems == []


def test_a_file_where_the_session_should_be_fails_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s1"
    path.write_text("not a directory")
    started = time.monotonic()
    with pytest.raises(FileExistsError):
        SessionClaim(path).claim(timeout=60)
    assert time.monotonic() - started < 30  # no waiting for a race that is not one
