"""`deftly rollout --backend local` for real: real git repos, real worker processes, the
real OpenAI SDK against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from deftly.scale.rollout.results import FIELDS
from tests.cli import DEFTLY
from tests.conftest import subprocess_env
from tests.scale.rollout_helpers import (
    edit_steps,
    git,
    make_repo,
    per_task,
    results,
    rollout,
    task,
    write_tasks,
)
from tests.scripted.script import Call, Fail, Reply, Say, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env


def test_each_task_becomes_a_result_line_with_every_field(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("t1", repo), task("t2", "repo", ref="main~1"), task("t3", repo, max_steps=3)],
    )
    with ModelServer(per_task()) as server:
        done = rollout(server, tasks, "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    lines = results(tmp_path / "tasks.results.jsonl")
    assert sorted(r["id"] for r in lines) == ["t1", "t2", "t3"]
    for record in lines:
        assert list(record) == list(FIELDS)
        assert record["status"] == "ok"
        assert record["stop_reason"] == "end_turn"
        assert record["text"] == f"answer {record['id']}"
        assert record["diff"] == ""
        assert record["usage"]["input_tokens"] == 100
        assert record["usage"]["output_tokens"] == 20
        assert record["steps"] == 1
        assert record["seconds"] > 0
        assert record["error"] is None
        assert record["attempts"] == 1
        kinds = [r["type"] for r in record["transcript"]]
        assert kinds[0] == "turn_start" and kinds[-1] == "turn_end"
        assert record["transcript"][0]["prompt"] == f"TASK {record['id']} do it"
    assert "[3/3]" in done.stderr
    assert "3 results in" in done.stderr


def test_a_task_that_edits_shows_its_changes_in_the_diff_new_files_included(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "main~1").strip()
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("e1", repo, ref=first)])
    with ModelServer(per_task(edit_steps)) as server:
        done = rollout(server, tasks, "--out", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    [record] = results(tmp_path / "out.jsonl")
    assert record["status"] == "ok" and record["steps"] == 3
    diff = record["diff"]
    assert "-hello\n+hello world" in diff
    assert "added/new.txt" in diff and "+made by e1" in diff
    assert "NOTES.md" not in diff  # the workspace was at `ref`, before NOTES.md existed
    # the diff is against ref: it applies to a checkout of ref and reproduces the change
    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", str(repo), str(check))
    git(check, "checkout", "-q", first)
    subprocess.run(["git", "apply", "-"], cwd=check, input=diff, text=True, check=True)
    assert (check / "README.md").read_text() == "hello world\n"
    assert (check / "added" / "new.txt").read_text() == "made by e1\n"
    assert not list(repo.glob("added"))  # the source repo is untouched


def test_the_setup_command_runs_in_the_workspace_before_the_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("s1", repo, setup="test -f README.md && echo ready > setup-ran.txt")],
    )
    script = per_task(lambda tid: [calls(Call("Read", {"path": "setup-ran.txt"})), say("ok")])
    with ModelServer(script) as server:
        done = rollout(server, tasks)
    assert done.returncode == 0, done.stderr
    [record] = results(tmp_path / "tasks.results.jsonl")
    tool_message = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert "ready" in json.dumps(tool_message)
    assert "+ready" in record["diff"]  # what setup made beside the repo's files shows too


def test_a_failing_setup_is_a_failed_result_and_the_others_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("bad", repo, setup="echo no such tool >&2; exit 3"), task("good", repo)],
    )
    with ModelServer(per_task()) as server:
        done = rollout(server, tasks)
    assert done.returncode == 1
    by_id = {r["id"]: r for r in results(tmp_path / "tasks.results.jsonl")}
    assert by_id["good"]["status"] == "ok"
    bad = by_id["bad"]
    assert (bad["status"], bad["stop_reason"], bad["steps"]) == ("failed", "setup", 0)
    assert "exit status 3" in bad["error"] and "no such tool" in bad["error"]
    assert bad["transcript"] is None
    assert all("TASK bad" not in json.dumps(body) for body in server.requests)
    assert "bad failed (setup" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_repo_or_ref_that_does_not_exist_fails_that_task_saying_why(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("gone", tmp_path / "nowhere"), task("noref", repo, ref="no-such-branch")],
    )
    with ModelServer(per_task()) as server:
        done = rollout(server, tasks)
    assert done.returncode == 1
    by_id = {r["id"]: r for r in results(tmp_path / "tasks.results.jsonl")}
    assert by_id["gone"]["stop_reason"] == "workspace"
    assert "does not exist on this worker" in by_id["gone"]["error"]
    assert by_id["noref"]["stop_reason"] == "workspace"
    assert "'no-such-branch' is not a commit" in by_id["noref"]["error"]
    assert server.requests == []


def test_a_bad_task_line_is_reported_with_its_number_and_the_others_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            task("ok1", repo),
            "{not json",
            json.dumps({"id": "x", "repo": str(repo)}),
            json.dumps(task("ok1", repo)),
            json.dumps({**task("y", repo), "colour": "red"}),
            "",
            task("ok2", repo),
        ],
    )
    with ModelServer(per_task()) as server:
        done = rollout(server, tasks)
    assert done.returncode == 1
    assert sorted(r["id"] for r in results(tmp_path / "tasks.results.jsonl")) == ["ok1", "ok2"]
    assert "line 2: not JSON" in done.stderr
    assert "line 3: prompt is missing" in done.stderr
    assert "line 4: the id 'ok1' is used by an earlier line" in done.stderr
    assert "line 5: colour is not a task field" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_rerun_skips_the_ids_already_in_the_results(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks_file = tmp_path / "tasks.jsonl"
    out = tmp_path / "out.jsonl"
    write_tasks(tasks_file, [task("a", repo), task("b", repo)])
    with ModelServer(per_task()) as server:
        assert rollout(server, tasks_file, "--out", str(out)).returncode == 0
    with out.open("a") as torn:
        torn.write('{"id": "c", "sta')  # a crash tore the last line: "c" has no result
    write_tasks(tasks_file, [task("a", repo), task("b", repo), task("c", repo)])
    with ModelServer(per_task()) as server:
        again = rollout(server, tasks_file, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "2 of 3 tasks already have results" in again.stderr
    assert [json.dumps(b).count("TASK c") > 0 for b in server.requests] == [True]
    ids = [r["id"] for r in results_tolerant(out)]
    assert sorted(ids) == ["a", "b", "c"]
    with ModelServer(per_task()) as server:
        third = rollout(server, tasks_file, "--out", str(out))
    assert third.returncode == 0 and server.requests == []
    assert "nothing to run" in third.stderr


def results_tolerant(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text().splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def test_transcripts_can_go_to_a_folder_with_the_result_holding_the_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("p/1", repo)])
    with ModelServer(per_task()) as server:
        done = rollout(server, tasks, "--transcripts", str(tmp_path / "tr"))
    assert done.returncode == 0, done.stderr
    [record] = results(tmp_path / "tasks.results.jsonl")
    path = Path(record["transcript"])
    assert path.parent == (tmp_path / "tr").resolve()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["prompt"] == "TASK p/1 do it"
    assert records[-1]["type"] == "turn_end"


def test_a_provider_that_refuses_fails_the_task_with_its_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("r1", repo), task("r2", repo)])
    script = per_task(
        on_request=lambda tid, step, body: (
            Fail(400, {"error": {"message": "bad model"}}) if tid == "r1" else None
        )
    )
    with ModelServer(script) as server:
        done = rollout(server, tasks)
    assert done.returncode == 1
    by_id = {r["id"]: r for r in results(tmp_path / "tasks.results.jsonl")}
    assert (by_id["r1"]["status"], by_id["r1"]["stop_reason"]) == ("failed", "error")
    assert "bad model" in by_id["r1"]["error"]
    assert by_id["r2"]["status"] == "ok"


def test_a_turn_past_its_time_limit_is_a_timeout_with_its_diff_so_far(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("slow", repo)])
    never = threading.Event()
    script = per_task(
        lambda tid: [
            calls(Call("Write", {"path": "partial.txt", "content": "half\n"})),
            Reply((Say("still thinking"),), gate=never),
        ]
    )
    try:
        with ModelServer(script) as server:
            done = rollout(server, tasks, "--timeout", "3")
    finally:
        never.set()
    assert done.returncode == 1
    [record] = results(tmp_path / "tasks.results.jsonl")
    assert (record["status"], record["stop_reason"]) == ("timeout", "timeout")
    assert "3 s time limit" in record["error"]
    assert "+half" in record["diff"]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"ROLLOUT_TEST_MARK={marker}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _start(server: ModelServer, tasks: Path, *args: str, marker: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            DEFTLY,
            "rollout",
            str(tasks),
            "--base-url",
            server.openai_url,
            "--model",
            "scripted",
            *args,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(OPENAI_API_KEY="k", ROLLOUT_TEST_MARK=marker, NO_COLOR="1"),
        start_new_session=True,
    )


def test_ctrl_c_stops_the_whole_rollout_and_leaves_no_process(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("w1", repo), task("w2", repo), task("w3", repo, setup="sleep 600 & sleep 600")],
    )
    held = threading.Event()
    both = threading.Barrier(2, timeout=60)
    arrived: list[str] = []

    def hold(tid: str, step: int, body: dict[str, Any]) -> None:
        arrived.append(tid)
        if len(arrived) <= 2:
            both.wait()  # two tasks are in their turns at once...
        held.wait(60)  # ...and neither gets its answer before Ctrl-C
        return None

    marker = uuid.uuid4().hex
    with ModelServer(per_task(on_request=hold)) as server:
        process = _start(server, tasks, "--concurrency", "3", marker=marker)
        try:
            assert server.wait_in_flight(2, timeout=120)
            os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
            _out, err = process.communicate(timeout=120)
        finally:
            held.set()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "interrupted: 0 tasks finished" in err and "Run the same command again" in err
    assert results(tmp_path / "tasks.results.jsonl") == []
    assert _processes_with(marker) == []  # workers, their setup's sleeps: all gone
    assert "Traceback" not in err


def test_a_worker_that_dies_is_replaced_and_its_task_reported_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("k1", repo), task("k2", repo)])
    first = threading.Event()
    release = threading.Event()
    count = {"k1": 0}

    def hold(tid: str, step: int, body: dict[str, Any]) -> None:
        if tid == "k1":
            count["k1"] += 1
            if count["k1"] == 1:
                first.set()
                release.wait(60)
        return None

    marker = uuid.uuid4().hex
    with ModelServer(per_task(on_request=hold)) as server:
        process = _start(server, tasks, "--concurrency", "1", marker=marker)
        try:
            assert first.wait(120)
            workers = [pid for pid in _processes_with(marker) if pid != process.pid]
            assert workers
            for pid in workers:
                if b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)
            _out, err = process.communicate(timeout=180)
        finally:
            release.set()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, err
    lines = results(tmp_path / "tasks.results.jsonl")
    assert sorted(r["id"] for r in lines) == ["k1", "k2"]
    k1 = next(r for r in lines if r["id"] == "k1")
    assert (k1["status"], k1["attempts"]) == ("ok", 2)
    assert "retry k1: the worker process was killed by SIGKILL" in err
