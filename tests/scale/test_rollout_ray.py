"""`deftly rollout` on a real Ray: a local instance started by the command, and a
two-node cluster on this machine (`ray.cluster_utils.Cluster`) driven through the library,
with results identical to the local backend and a worker node removed mid-rollout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly.scale.rollout.driver import run_rollout
from deftly.scale.rollout.local import LocalBackend
from deftly.scale.rollout.progress import Progress
from deftly.scale.rollout.ray_backend import RayBackend
from deftly.scale.rollout.results import ResultWriter
from deftly.scale.rollout.runner import RunOptions
from deftly.scale.rollout.tasks import load_tasks
from tests.cli import DEFTLY, run_deftly
from tests.conftest import subprocess_env
from tests.scale.rollout_helpers import (
    comparable,
    edit_steps,
    make_repo,
    per_task,
    results,
    rollout,
    task,
    task_of,
    write_tasks,
)
from tests.scripted.script import Step, say
from tests.scripted.server import ModelServer

pytestmark = [pytest.mark.ray, pytest.mark.local_env]

SMALL_STORE = 100 * 1024 * 1024
"""Each node's object store (bytes): small, the machine is shared."""


def test_the_command_starts_a_local_ray_and_a_rerun_skips_finished_ids(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [task("r1", repo), task("r2", repo), task("e1", repo)]
    )
    with ModelServer(per_task(_steps)) as server:
        done = rollout(server, tasks_file, "--backend", "ray")
    assert done.returncode == 0, done.stderr
    lines = results(tmp_path / "tasks.results.jsonl")
    assert sorted(r["id"] for r in lines) == ["e1", "r1", "r2"]
    assert all(r["status"] == "ok" and r["attempts"] == 1 for r in lines)
    assert "+hello world" in next(r for r in lines if r["id"] == "e1")["diff"]
    write_tasks(
        tasks_file, [task("r1", repo), task("r2", repo), task("e1", repo), task("r3", repo)]
    )
    with ModelServer(per_task(_steps)) as server:
        again = rollout(server, tasks_file, "--backend", "ray")
    assert again.returncode == 0, again.stderr
    assert "3 of 4 tasks already have results" in again.stderr
    assert {_task_in(b) for b in server.requests} == {"r3"}


def _steps(task_id: str) -> list[Step]:
    return edit_steps(task_id) if task_id.startswith("e") else [say(f"answer {task_id}")]


def _task_in(body: dict[str, Any]) -> str:
    return task_of(body)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A head (1 CPU) and one worker node (1 CPU), this process connected as the driver;
    the workers see their own config and data homes."""
    import ray
    from ray.cluster_utils import Cluster

    home = tmp_path_factory.mktemp("ray-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(home / "config"))
        patch.setenv("DEFTLY_HOME", str(home / "data"))
        patch.setenv("RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION", "0.005")
        made = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "object_store_memory": SMALL_STORE,
                "include_dashboard": False,
            },
        )
        made.add_node(num_cpus=1, object_store_memory=SMALL_STORE)
        made.wait_for_nodes()
        ray.init(address=made.address, log_to_driver=False, configure_logging=False)
        try:
            yield made
        finally:
            ray.shutdown()
            made.shutdown()


def _run(tasks_file: Path, out: Path, backend: Any, server: ModelServer) -> None:
    """The rollout through the library, this process its driver (the cluster's workers
    were started before the server, so the URL goes in the options)."""
    tasks, problems = load_tasks(tasks_file)
    assert problems == []
    options = RunOptions(model="scripted", base_url=server.openai_url)
    with ResultWriter(out) as writer, Progress(len(tasks), bar=False) as progress:
        run_rollout(tasks, options, backend, writer, progress)


def _mixed_tasks(tmp_path: Path, count: int) -> Path:
    repo = make_repo(tmp_path / "repo")
    lines = []
    for n in range(count):
        kind = "e" if n % 3 == 0 else "r"
        fields: dict[str, Any] = {"ref": "main~1"} if n % 4 == 1 else {}
        if n == 7:
            fields["setup"] = "exit 4"
        lines.append(task(f"{kind}{n}", repo, **fields))
    return write_tasks(tmp_path / "tasks.jsonl", lines)


def test_twenty_tasks_over_two_nodes_match_the_local_backend(cluster: Any, tmp_path: Path) -> None:
    tasks_file = _mixed_tasks(tmp_path, 20)
    with ModelServer(per_task(_steps)) as server:
        _run(tasks_file, tmp_path / "local.jsonl", LocalBackend(2), server)
        _run(tasks_file, tmp_path / "ray.jsonl", RayBackend(cluster.address), server)
    local = sorted((comparable(r) for r in results(tmp_path / "local.jsonl")), key=_id)
    on_ray = sorted((comparable(r) for r in results(tmp_path / "ray.jsonl")), key=_id)
    assert len(local) == 20
    assert on_ray == local
    assert sum(r["status"] == "ok" for r in on_ray) == 19
    assert next(r for r in on_ray if r["id"] == "r7")["stop_reason"] == "setup"


def _id(record: dict[str, Any]) -> str:
    return str(record["id"])


def test_a_worker_node_removed_mid_rollout_has_its_tasks_retried_and_each_id_reported_once(
    cluster: Any, tmp_path: Path
) -> None:
    import ray

    victim_tmp = tmp_path / "victim-tmp"
    victim_tmp.mkdir()
    victim = cluster.add_node(
        num_cpus=2, object_store_memory=SMALL_STORE, env_vars={"TMPDIR": str(victim_tmp)}
    )
    cluster.wait_for_nodes()
    assert ray.cluster_resources().get("CPU") == 4
    on_victim = threading.Event()
    release = threading.Event()
    seen: dict[str, int] = {}
    victims: set[str] = set()

    def hold(task_id: str, step: int, body: dict[str, Any]) -> None:
        if step == 0:
            seen[task_id] = seen.get(task_id, 0) + 1
        if str(victim_tmp) in json.dumps(body["messages"][0]):
            victims.add(task_id)
            on_victim.set()  # a task is running its turn on the node about to go
        release.wait(60)
        return None

    repo = make_repo(tmp_path / "repo")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task(f"n{i}", repo) for i in range(8)])
    out = tmp_path / "out.jsonl"
    errors: list[BaseException] = []

    def drive() -> None:
        try:
            _run(tasks_file, out, RayBackend(cluster.address), server)
        except BaseException as exc:
            errors.append(exc)

    with ModelServer(per_task(on_request=hold)) as server:
        driver = threading.Thread(target=drive)
        driver.start()
        try:
            assert on_victim.wait(180), "no task reached the worker node"
            cluster.remove_node(victim)
        finally:
            release.set()
        driver.join(300)
    assert not driver.is_alive() and errors == []
    lines = results(out)
    assert sorted(r["id"] for r in lines) == sorted(f"n{i}" for i in range(8))  # each once
    assert all(r["status"] == "ok" for r in lines), [r["error"] for r in lines]
    retried = [r for r in lines if r["attempts"] > 1]
    assert retried, "no task was retried after its node went"
    assert victims <= {r["id"] for r in retried}
    for task_id in victims:  # what was mid-turn on the lost node ran again, from the start
        assert seen[task_id] == 2


def test_env_forwards_a_variable_to_the_clusters_workers_and_nothing_else_does(
    cluster: Any, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task("f1", repo)])
    with ModelServer(per_task()) as server:
        args = ("rollout", str(tasks_file), "--backend", "ray", "--address", cluster.address)
        args += ("--model", "scripted")
        alone = run_deftly(
            *args, "--out", str(tmp_path / "a.jsonl"), OPENAI_BASE_URL=server.openai_url
        )
        forwarded = run_deftly(
            *args,
            "--env",
            "OPENAI_BASE_URL",
            "--out",
            str(tmp_path / "b.jsonl"),
            OPENAI_BASE_URL=server.openai_url,
        )
    [unseen] = results(tmp_path / "a.jsonl")
    assert alone.returncode == 1
    assert (unseen["status"], unseen["stop_reason"]) == ("failed", "model")
    assert "set OPENAI_API_KEY" in unseen["error"]  # the workers never saw the local URL
    [seen] = results(tmp_path / "b.jsonl")
    assert forwarded.returncode == 0, forwarded.stderr
    assert seen["text"] == "answer f1"


def test_ctrl_c_cancels_the_whole_rollout_on_ray(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task(f"c{i}", repo) for i in range(4)])
    held = threading.Event()

    def hold(task_id: str, step: int, body: dict[str, Any]) -> None:
        held.wait(120)
        return None

    with ModelServer(per_task(on_request=hold)) as server:
        process = subprocess.Popen(
            [
                DEFTLY,
                "rollout",
                str(tasks_file),
                "--backend",
                "ray",
                "--model",
                "scripted",
                "--base-url",
                server.openai_url,
                "--num-cpus",
                "1",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(
                OPENAI_API_KEY="k", RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION="0.005"
            ),
            start_new_session=True,
        )
        try:
            assert server.wait_in_flight(1, timeout=180)
            os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
            _out, err = process.communicate(timeout=180)
        finally:
            held.set()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "interrupted: 0 tasks finished" in err
    assert results(tmp_path / "tasks.results.jsonl") == []
    assert "Traceback" not in err
