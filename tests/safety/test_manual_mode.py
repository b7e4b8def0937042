"""Issue 10 §2: manual mode never destroys what cannot be restored.

A change to an existing file is approved unasked only when git can restore it (tracked and
clean) or this session read or wrote it and it has not changed since. A new file needs no
question. Real git repositories, the real Write/Edit/Read tools, the real CLI.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deftly import Outcome, Runtime
from deftly.policy import Link, Verdict
from deftly.policy.permissions.git import FileState, file_state, find_git_tree
from tests.cli import run_deftly


def git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        timeout=60,
        capture_output=True,
    )


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q")
    (workspace / "tracked.txt").write_text("committed\n")
    (workspace / ".gitignore").write_text("ignored.txt\n")
    git(workspace, "add", "tracked.txt", ".gitignore")
    git(workspace, "commit", "-q", "-m", "init")
    return workspace


def manual(ws: Path) -> Runtime:
    return Runtime(ws, config={}, plugins=False, mode="manual")


async def test_an_untracked_file_never_read_is_not_replaced(repo: Path) -> None:
    (repo / "notes.txt").write_text("my notes\n")
    async with manual(repo) as rt:
        result = await rt.call("Write", {"path": "notes.txt", "content": "x"})
    assert result.outcome is Outcome.VETOED
    assert (repo / "notes.txt").read_text() == "my notes\n"
    text = " ".join(result.text.split())
    assert (
        "notes.txt is not tracked by git and this session has not read it: git cannot "
        "restore it" in text
    )
    assert "Read it first" in text and "--yes" in text
    assert f"allow = ['Write({repo}/notes.txt)']" in text


async def test_reading_first_lets_the_write_through(repo: Path) -> None:
    (repo / "notes.txt").write_text("my notes\n")
    async with manual(repo) as rt:
        read = await rt.call("Read", {"path": "notes.txt"})
        assert not read.is_error, read.text
        wrote = await rt.call("Write", {"path": "notes.txt", "content": "new\n"})
        assert not wrote.is_error, wrote.text
        # what it wrote itself it may change again
        again = await rt.call(
            "Edit", {"path": "notes.txt", "old_string": "new", "new_string": "newer"}
        )
        assert not again.is_error, again.text
    assert (repo / "notes.txt").read_text() == "newer\n"


async def test_a_file_changed_after_it_was_read_asks_again(repo: Path) -> None:
    notes = repo / "notes.txt"
    notes.write_text("my notes\n")
    async with manual(repo) as rt:
        await rt.call("Read", {"path": "notes.txt"})
        notes.write_text("someone else's longer notes\n")
        decision = await rt.explain("Write", {"path": "notes.txt", "content": "x"})
        result = await rt.call("Write", {"path": "notes.txt", "content": "x"})
    assert decision.verdict is Verdict.ASK, decision.explain()
    assert "changed since this session last read or wrote it" in decision.reason
    assert result.is_error and notes.read_text() == "someone else's longer notes\n"


async def test_a_committed_clean_file_and_a_new_file_need_no_question(repo: Path) -> None:
    async with manual(repo) as rt:
        clean = await rt.call("Write", {"path": "tracked.txt", "content": "changed\n"})
        new = await rt.call("Write", {"path": "src/new.py", "content": "x = 1\n"})
    assert not clean.is_error, clean.text
    assert not new.is_error, new.text
    assert (repo / "tracked.txt").read_text() == "changed\n"
    assert (repo / "src/new.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("name", "prepare", "said"),
    [
        ("tracked.txt", "modify", "has changes not committed to git"),
        ("tracked.txt", "stage", "has changes not committed to git"),
        ("ignored.txt", "create", "is ignored by git"),
        ("sub/untracked.txt", "create", "is not tracked by git"),
    ],
)
async def test_what_git_cannot_restore_asks(repo: Path, name: str, prepare: str, said: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("work in progress\n")
    if prepare == "stage":
        git(repo, "add", name)
    async with manual(repo) as rt:
        for tool, args in (
            ("Write", {"path": name, "content": "x"}),
            ("Edit", {"path": name, "old_string": "work", "new_string": "lost"}),
        ):
            decision = await rt.explain(tool, args)
            assert (decision.verdict, decision.link) == (Verdict.ASK, Link.FALLBACK)
            assert said in decision.reason and "git cannot restore it" in decision.reason
            result = await rt.call(tool, args)
            assert result.outcome is Outcome.VETOED
    assert path.read_text() == "work in progress\n"


async def test_outside_a_git_work_tree_only_new_files_pass(workspace: Path) -> None:
    (workspace / "old.txt").write_text("keep\n")
    async with manual(workspace) as rt:
        new = await rt.call("Write", {"path": "fresh.txt", "content": "x"})
        old = await rt.call("Write", {"path": "old.txt", "content": "x"})
    assert not new.is_error and (workspace / "fresh.txt").read_text() == "x"
    assert old.outcome is Outcome.VETOED and (workspace / "old.txt").read_text() == "keep\n"
    assert "not in a git work tree" in old.text


def test_git_that_cannot_run_means_not_restorable(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = find_git_tree(repo)
    assert tree is not None
    assert file_state(tree, (repo / "tracked.txt").resolve())[0] is FileState.CLEAN
    monkeypatch.setenv("PATH", str(repo / "no-such-bin"))  # no git to be found
    state, why = file_state(tree, (repo / "tracked.txt").resolve())
    assert state is FileState.UNKNOWN and "git could not be run" in why


async def test_yolo_and_auto_are_unchanged(repo: Path) -> None:
    (repo / "notes.txt").write_text("mine\n")
    for mode in ("yolo", "auto"):
        async with Runtime(repo, config={}, plugins=False, mode=mode) as rt:
            decision = await rt.explain("Write", {"path": "notes.txt", "content": "x"})
        assert decision.verdict is Verdict.APPROVE, (mode, decision.explain())


def test_the_cli_refuses_an_untracked_unread_file(repo: Path) -> None:
    """The issue's exact case: `deftly call Write` with no terminal, an untracked notes.txt."""
    (repo / "notes.txt").write_text("my notes\n")
    done = run_deftly("call", "Write", '{"path":"notes.txt","content":"x"}', "-w", str(repo))
    assert done.returncode != 0, done.stdout
    assert (repo / "notes.txt").read_text() == "my notes\n"
    out = " ".join(done.stdout.split())
    assert "notes.txt is not tracked by git and this session has not read it" in out
    assert "--yes" in out
