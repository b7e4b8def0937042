"""The state store: typed values kept as JSON in the session directory, shared by every
store on one directory in a process, with change events; bad files are set aside, never
lost, and a failed save never crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from deftly.session import StateChanged, StateStore
from tests.conftest import subprocess_env


class PlanState(BaseModel):
    active: bool = False
    plan_file: str | None = None
    steps: list[str] = Field(default_factory=list)


class Counter(BaseModel):
    count: int = 0


class NoDefault(BaseModel):
    name: str


def session(tmp_path: Path) -> Path:
    path = tmp_path / "session"
    path.mkdir()
    return path


def test_a_key_starts_from_its_defaults_and_keeps_what_is_set(tmp_path: Path) -> None:
    directory = session(tmp_path)
    plan = StateStore(directory).slot("plan", PlanState)
    assert plan.get() == PlanState()
    assert not (directory / "state").exists()  # nothing is written until something is set
    plan.set(PlanState(active=True, steps=["read", "edit"]))
    assert plan.get() == PlanState(active=True, steps=["read", "edit"])
    saved = json.loads((directory / "state" / "plan.json").read_text())
    assert saved == {"active": True, "plan_file": None, "steps": ["read", "edit"]}
    assert plan.problem is None
    assert [p.name for p in (directory / "state").iterdir()] == ["plan.json"]  # no scratch


def test_get_hands_out_a_copy(tmp_path: Path) -> None:
    plan = StateStore(session(tmp_path)).slot("plan", PlanState)
    value = plan.get()
    value.steps.append("sneaked in")
    assert plan.get().steps == []


def test_update_returns_the_new_value_and_tells_the_listeners(tmp_path: Path) -> None:
    counter = StateStore(session(tmp_path)).slot("counter", Counter)
    heard: list[StateChanged[Counter]] = []
    stop = counter.subscribe(heard.append)
    assert counter.update(lambda c: Counter(count=c.count + 1)).count == 1
    counter.set(Counter(count=5))
    assert [(change.key, change.value.count) for change in heard] == [
        ("counter", 1),
        ("counter", 5),
    ]
    stop()
    counter.set(Counter(count=6))
    assert len(heard) == 2


def test_a_failing_listener_does_not_stop_the_others(tmp_path: Path) -> None:
    counter = StateStore(session(tmp_path)).slot("counter", Counter)
    heard: list[int] = []

    def broken(change: StateChanged[Counter]) -> None:
        raise RuntimeError("listener bug")

    counter.subscribe(broken)
    counter.subscribe(lambda change: heard.append(change.value.count))
    counter.set(Counter(count=3))
    assert heard == [3]
    assert counter.get().count == 3


def test_stores_on_one_directory_share_values_and_events(tmp_path: Path) -> None:
    directory = session(tmp_path)
    one = StateStore(directory).slot("counter", Counter)
    other = StateStore(directory).slot("counter", Counter)
    heard: list[int] = []
    other.subscribe(lambda change: heard.append(change.value.count))
    one.set(Counter(count=7))
    assert other.get().count == 7
    assert heard == [7]


def test_stores_without_a_directory_keep_state_in_memory_apart(tmp_path: Path) -> None:
    one, other = StateStore(None), StateStore(None)
    assert not one.persistent and one.directory is None
    one.slot("counter", Counter).set(Counter(count=2))
    assert one.slot("counter", Counter).get().count == 2
    assert other.slot("counter", Counter).get().count == 0
    assert one.problems() == []


@pytest.mark.parametrize("key", ["Plan", "../plan", ".hidden", "", "a/b", "x" * 101, "é"])
def test_a_bad_key_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="not a valid state key"):
        StateStore(session(tmp_path)).slot(key, Counter)


def test_a_model_needs_defaults_and_a_key_holds_one_model(tmp_path: Path) -> None:
    store = StateStore(session(tmp_path))
    with pytest.raises(TypeError, match="every field needs a default"):
        store.slot("named", NoDefault)
    store.slot("counter", Counter)
    with pytest.raises(TypeError, match="already holds Counter"):
        store.slot("counter", PlanState)
    with pytest.raises(TypeError, match="holds Counter, not PlanState"):
        store.slot("counter", Counter).set(PlanState())  # type: ignore[arg-type]


def test_a_value_that_would_not_read_back_is_refused(tmp_path: Path) -> None:
    counter = StateStore(session(tmp_path)).slot("counter", Counter)
    counter.set(Counter(count=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns while dumping the wrong type
        with pytest.raises(ValueError, match="would not read back"):
            counter.set(Counter.model_construct(count="many"))
    assert counter.get().count == 1


@pytest.mark.parametrize(
    ("content", "reason"),
    [("{not json", "Invalid JSON"), ('{"count": "many"}', "count: Input should be")],
)
def test_a_bad_file_is_set_aside_and_reported(tmp_path: Path, content: str, reason: str) -> None:
    directory = session(tmp_path)
    (directory / "state").mkdir()
    (directory / "state" / "counter.json").write_text(content)
    counter = StateStore(directory).slot("counter", Counter)
    assert counter.get() == Counter()
    bad = directory / "state" / "counter.json.bad"
    assert bad.read_text() == content
    assert counter.problem is not None
    assert reason in counter.problem and str(bad) in counter.problem
    assert "starts from its defaults" in counter.problem
    assert not (directory / "state" / "counter.json").exists()
    counter.set(Counter(count=1))  # a new value is kept, the old file still set aside
    assert json.loads((directory / "state" / "counter.json").read_text()) == {"count": 1}
    assert bad.read_text() == content
    assert StateStore(directory).problems() == [counter.problem]


def test_a_failed_save_keeps_the_value_and_says_so(tmp_path: Path) -> None:
    directory = session(tmp_path)
    counter = StateStore(directory).slot("counter", Counter)
    directory.rmdir()  # the session directory went away (closed and removed)
    counter.set(Counter(count=4))
    assert counter.get().count == 4
    assert counter.problem is not None
    assert "could not save the state 'counter'" in counter.problem
    assert "holds in this process only" in counter.problem
    assert not directory.exists()  # a late write does not bring the session back
    directory.mkdir()
    counter.set(Counter(count=5))
    assert counter.problem is None
    assert json.loads((directory / "state" / "counter.json").read_text()) == {"count": 5}


def test_updates_from_many_threads_are_all_kept(tmp_path: Path) -> None:
    directory = session(tmp_path)
    counter = StateStore(directory).slot("counter", Counter)
    start = threading.Barrier(4)

    def bump() -> None:
        start.wait()
        for _ in range(25):
            counter.update(lambda c: Counter(count=c.count + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert counter.get().count == 100
    assert json.loads((directory / "state" / "counter.json").read_text()) == {"count": 100}


WRITER = """
import sys
from pathlib import Path
from pydantic import BaseModel
from deftly.session import StateStore

class Counter(BaseModel):
    count: int = 0

slot = StateStore(Path(sys.argv[1])).slot("counter", Counter)
print(slot.get().count, flush=True)
slot.set(Counter(count=int(sys.argv[2])))
"""


def test_another_process_reads_what_this_one_wrote_and_the_last_writer_wins(
    tmp_path: Path,
) -> None:
    directory = session(tmp_path)
    mine = StateStore(directory).slot("counter", Counter)
    mine.set(Counter(count=3))

    def other_process(value: int) -> str:
        done = subprocess.run(
            [sys.executable, "-c", WRITER, str(directory), str(value)],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
            check=True,
        )
        return done.stdout.strip()

    assert other_process(8) == "3"  # it read what this process wrote, then wrote 8
    assert other_process(9) == "8"
    assert mine.get().count == 3  # this process read the key once; it does not reload
    mine.set(Counter(count=4))  # the last writer wins
    assert other_process(10) == "4"


def test_reload_reads_the_files_again_but_keeps_an_unsaved_value(tmp_path: Path) -> None:
    directory = session(tmp_path)
    store = StateStore(directory)
    counter, plan = store.slot("counter", Counter), store.slot("plan", PlanState)
    counter.set(Counter(count=1))
    plan.set(PlanState(active=True))
    state = directory / "state"
    state.rename(directory / "state.away")
    state.write_text("a file where the state folder should be")
    plan.set(PlanState(active=True, steps=["unsaved"]))  # this save fails
    assert plan.problem is not None and "could not save" in plan.problem
    state.unlink()
    (directory / "state.away").rename(state)
    (state / "counter.json").write_text('{"count": 9}')  # as another process would
    store.reload()
    assert counter.get().count == 9
    assert plan.get().steps == ["unsaved"]  # nowhere else: kept


def test_a_second_bad_file_does_not_overwrite_the_first(tmp_path: Path) -> None:
    directory = session(tmp_path)
    state = directory / "state"
    state.mkdir()
    (state / "counter.json.bad").write_text("the first bad file")
    (state / "counter.json").write_text("the second")
    counter = StateStore(directory).slot("counter", Counter)
    assert counter.get() == Counter()
    assert (state / "counter.json.bad").read_text() == "the first bad file"
    assert (state / "counter.json.bad.2").read_text() == "the second"
    assert counter.problem is not None and str(state / "counter.json.bad.2") in counter.problem


def test_scratch_files_of_a_dead_writer_are_swept(tmp_path: Path) -> None:
    directory = session(tmp_path)
    state = directory / "state"
    state.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    left = state / f".counter.json.{dead.stdout.strip()}.abcd1234.tmp"
    left.write_text('{"count": 1')  # killed half-way
    mine = state / f".plan.json.{os.getpid()}.abcd1234.tmp"  # a live writer's
    mine.write_text("{")
    StateStore(directory).slot("counter", Counter).set(Counter(count=2))
    assert not left.exists() and mine.exists()
    assert sorted(p.name for p in state.iterdir()) == [mine.name, "counter.json"]
