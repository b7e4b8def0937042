"""Sessions: opened with a new or an existing id (resume), shared by agents through
attach/detach with the claim released by the last one, and usable without a directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from deftly.session import IN_USE, Session, prune_sessions, session_dir
from tests.conftest import subprocess_env
from tests.core.test_sessions import age


class Todo(BaseModel):
    items: list[str] = []


def open_session(tmp_path: Path, session_id: str | None = None) -> Session:
    return Session.open(tmp_path / "workspace", home=tmp_path / "home", session_id=session_id)


def held(session: Session) -> bool:
    """Whether pruning would leave the session alone (someone holds it)."""
    assert session.directory is not None
    age(session.directory, days=30)
    sessions = session.directory.parent
    return session.directory not in prune_sessions(
        sessions, older_than_days=1, keep=sessions / "none"
    )


def test_a_new_session_has_an_id_a_held_directory_and_a_store(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    assert session.directory == session_dir(tmp_path / "workspace", session.id, tmp_path / "home")
    assert session.directory is not None and (session.directory / IN_USE).exists()
    assert session.store.persistent and session.store.directory == session.directory
    assert session.problem is None and not session.resumed
    session.close()
    assert session.closed and not session.directory.exists()  # it kept nothing


def test_a_resumed_session_sees_the_state_the_first_run_wrote(tmp_path: Path) -> None:
    first = open_session(tmp_path)
    first.store.slot("todo", Todo).set(Todo(items=["write tests"]))
    first.close()
    assert first.directory is not None and first.directory.is_dir()  # it kept state
    again = open_session(tmp_path, session_id=first.id)
    assert again.resumed and again.directory == first.directory
    assert again.store.slot("todo", Todo).get() == Todo(items=["write tests"])
    again.close()


RESUMER = """
import sys
from pathlib import Path
from pydantic import BaseModel
from deftly.session import Session

class Todo(BaseModel):
    items: list[str] = []

session = Session.open(Path(sys.argv[1]), home=Path(sys.argv[2]), session_id=sys.argv[3])
slot = session.store.slot("todo", Todo)
print(session.resumed, ",".join(slot.get().items), flush=True)
slot.update(lambda todo: Todo(items=[*todo.items, "from the resumed run"]))
session.close()
"""


def test_a_session_resumed_by_another_process(tmp_path: Path) -> None:
    first = open_session(tmp_path)
    first.store.slot("todo", Todo).set(Todo(items=["first"]))
    first.close()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RESUMER,
            str(tmp_path / "workspace"),
            str(tmp_path / "home"),
            first.id,
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "True first"
    third = open_session(tmp_path, session_id=first.id)
    assert third.store.slot("todo", Todo).get().items == ["first", "from the resumed run"]
    third.close()


def test_agents_attached_to_a_session_keep_it_until_the_last_detaches(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    child = session.attach()
    grandchild = session.attach()
    assert child is session and session.holders == 3
    session.detach()  # the opener is done; its children still run
    child.detach()
    assert not session.closed and held(session)
    grandchild.detach()
    assert session.closed and session.holders == 0
    assert session.directory is not None and not session.directory.exists()
    session.detach()  # a no-op once closed
    with pytest.raises(RuntimeError, match="is closed: open it again"):
        session.attach()


def test_close_ends_the_session_whoever_still_holds_it(tmp_path: Path) -> None:
    with open_session(tmp_path) as session:
        session.attach()
        session.store.slot("todo", Todo).set(Todo(items=["x"]))
    assert session.closed
    assert session.directory is not None
    age(session.directory, days=30)
    sessions = session.directory.parent
    assert prune_sessions(sessions, older_than_days=1, keep=sessions / "none") == [
        session.directory
    ]


def test_two_opens_of_one_id_in_one_process_share_the_directory(tmp_path: Path) -> None:
    parent = open_session(tmp_path)
    other = open_session(tmp_path, session_id=parent.id)
    parent.store.slot("todo", Todo).set(Todo(items=["shared"]))
    assert other.store.slot("todo", Todo).get().items == ["shared"]
    parent.close()
    assert held(other)
    other.close()


@pytest.mark.parametrize("blocked", ["file", "sessions-file"])
def test_a_session_whose_directory_cannot_be_made_keeps_state_in_memory(
    tmp_path: Path, blocked: str
) -> None:
    home = tmp_path / "home"
    if blocked == "file":
        home.write_text("a file where the data home should be")
    else:  # (a read-only folder would not stop root, who runs CI here)
        home.mkdir()
        (home / "sessions").write_text("a file where the sessions folder should be")
    try:
        session = open_session(tmp_path)
        assert session.directory is None
        assert session.problem is not None
        assert f"cannot use the session directory {session.location}" in session.problem
        assert "in memory only" in session.problem and "long results" in session.problem
        assert not session.store.persistent
        todo = session.store.slot("todo", Todo)
        todo.set(Todo(items=["kept in memory"]))
        assert todo.get().items == ["kept in memory"] and todo.problem is None
        child = session.attach()
        child.detach()
        session.close()
        assert session.closed
    finally:
        if home.is_dir():
            home.chmod(0o700)
    # nothing was written anywhere: the blocking file is all there is
    assert home.is_file() or [p.name for p in home.iterdir()] == ["sessions"]
    assert home.is_file() or (home / "sessions").is_file()


@pytest.mark.parametrize("bad", ["../escape", "a/b", ".hidden", "", "x" * 129, "semi;colon"])
def test_an_id_that_cannot_name_a_directory_is_refused(tmp_path: Path, bad: str) -> None:
    if bad == "":
        session = open_session(tmp_path, session_id=bad)  # empty means a new id
        assert session.id
        session.close()
        return
    with pytest.raises(ValueError, match="not a valid session id"):
        open_session(tmp_path, session_id=bad)
    assert not (tmp_path / "home").exists()
