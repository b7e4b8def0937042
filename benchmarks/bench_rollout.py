"""`deftly rollout`'s own cost: N tasks (default 200) whose model replies at once, no tools.

Each task is one agent turn in a fresh clone of a small git repo (the real loop, the real
openai SDK, the scripted server over HTTP on 127.0.0.1). Measured:

1. Per-task overhead of each backend beyond the model calls. Floor: the same N agent
   turns run in-process in a loop (a fresh Runtime and Agent per turn, no clone, no
   worker). A backend's figure is its wall time per task at one task at a time (the local
   pool with one worker; Ray with one 1-CPU node): clone, diff, transcript, result line,
   the hop to the worker and back.
2. Throughput with 1 vs 2 Ray nodes (ray.cluster_utils.Cluster, 1 CPU each; floor: 1
   node). On a 2-core machine shared with other work the ideal 2x is not reachable.

    .venv/bin/python benchmarks/bench_rollout.py [N]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scale.rollout_helpers import make_repo, per_task, task, write_tasks
from tests.scripted.server import ModelServer

from _common import clock, isolate, row
from deftly.agent import Agent
from deftly.providers.openai_chat import OpenAIProvider
from deftly.runtime import Runtime
from deftly.scale.rollout.driver import Backend, run_rollout
from deftly.scale.rollout.local import LocalBackend
from deftly.scale.rollout.progress import Progress
from deftly.scale.rollout.ray_backend import RayBackend
from deftly.scale.rollout.results import ResultWriter
from deftly.scale.rollout.runner import RunOptions
from deftly.scale.rollout.tasks import Task, load_tasks

STORE = 100 * 1024 * 1024


def in_process(server: ModelServer, workspace: Path, tasks: list[Task]) -> float:
    """The floor: every task's agent turn in this process, one after another."""

    async def turns() -> None:
        for one in tasks:
            provider = OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k")
            async with Runtime(workspace) as runtime, Agent(runtime, provider) as agent:
                result = await agent.run(one.prompt)
                assert result.stop_reason == "end_turn", result.error

    start = clock()
    asyncio.run(turns())
    return clock() - start


def rollout(server: ModelServer, tasks: list[Task], backend: Backend, out: Path) -> float:
    """Wall time of the whole rollout on `backend`."""
    options = RunOptions(model="scripted", base_url=server.openai_url)
    start = clock()
    with ResultWriter(out) as writer, Progress(len(tasks), open("/dev/null", "w")) as progress:
        summary = run_rollout(tasks, options, backend, writer, progress)
    took = clock() - start
    assert summary.by_status == {"ok": len(tasks)}, summary.by_status
    return took


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    home = isolate()
    repo = make_repo(home / "repo")
    tasks_file = write_tasks(home / "tasks.jsonl", [task(f"t{n}", repo) for n in range(count)])
    tasks, _ = load_tasks(tasks_file)
    out = Path(tempfile.mkdtemp(prefix="rollout-bench-"))
    print(f"deftly rollout: {count} tasks, the model answers at once without tools")
    with ModelServer(per_task()) as server:
        floor = in_process(server, repo, tasks) / count
        local = rollout(server, tasks, LocalBackend(1), out / "local1.jsonl") / count
        local2 = rollout(server, tasks, LocalBackend(2), out / "local2.jsonl")
        one_node, two_nodes, ray_task = ray_rows(server, tasks, out)
    row("an agent turn in-process, per task (floor)", floor * 1e3, "ms")
    row("local backend, 1 worker, per task", local * 1e3, "ms", floor * 1e3)
    row("  overhead per task beyond the floor", (local - floor) * 1e3, "ms")
    row("ray backend, one 1-CPU node, per task", ray_task * 1e3, "ms", floor * 1e3)
    row("  overhead per task beyond the floor", (ray_task - floor) * 1e3, "ms")
    row("local backend, 2 workers, tasks/s", count / local2, "t/s")
    row("ray, 1 node (1 CPU), tasks/s (floor)", one_node, "t/s")
    row("ray, 2 nodes (1 CPU each), tasks/s", two_nodes, "t/s", one_node, "ideal 2x")


def ray_rows(server: ModelServer, tasks: list[Task], out: Path) -> tuple[float, float, float]:
    """Throughput on one node, then on two; and the one-node time per task."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": STORE, "include_dashboard": False},
    )
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    try:
        rollout(server, tasks[:4], RayBackend(cluster.address), out / "warm.jsonl")
        one = rollout(server, tasks, RayBackend(cluster.address), out / "ray1.jsonl")
        cluster.add_node(num_cpus=1, object_store_memory=STORE)
        cluster.wait_for_nodes()
        rollout(server, tasks[:4], RayBackend(cluster.address), out / "warm2.jsonl")
        two = rollout(server, tasks, RayBackend(cluster.address), out / "ray2.jsonl")
    finally:
        ray.shutdown()
        cluster.shutdown()
    return len(tasks) / one, len(tasks) / two, one / len(tasks)


if __name__ == "__main__":
    main()
