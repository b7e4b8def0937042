"""A swarm spread over two Ray nodes (Ray's own `ray.cluster_utils.Cluster` on this
machine, one CPU each): two children that run at the same time, each asking for a whole
CPU, run on different nodes, and the swarm's result is the local backend's."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from deftly.agent import Agent
from deftly.features import BUILTIN_FEATURES
from deftly.scale.ray_children import RayChildren, ray_children
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.scripted.script import Call, Fail, Step, calls, say
from tests.scripted.server import ModelServer
from tests.swarm.ray_cluster import node_ids

pytestmark = [pytest.mark.ray, pytest.mark.local_env]

NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
MARK = "NODE-ITEM "


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[Any]:
    """`ray` connected to a two-node cluster (a head and a worker node)."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
        cluster.shutdown()


async def test_two_children_at_once_run_on_both_nodes(
    make_runtime: Callable[..., Any], two_nodes: Any
) -> None:
    together = threading.Barrier(2, timeout=120)  # both children are running at once

    def script(body: dict[str, Any]) -> Step:
        prompt = next((content_text(m) for m in body["messages"] if m["role"] == "user"), "")
        found = re.search(MARK + r"(\S+):", prompt)
        if found is not None:
            together.wait()
            return say(f"done {found[1]}")
        if any(m["role"] == "tool" for m in body["messages"]):
            return say("both done")
        if "go" not in prompt:
            return Fail(400, "unexpected request")
        template = MARK + "{{item}}: do it."
        arguments = {"description": "spread", "prompt_template": template, "items": ["a", "b"]}
        return calls(Call("AgentSwarm", arguments))

    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), children_backend=ray_children())
        turn = await run_turn(agent, "go")
        backend = runtime.agent.subagents.backend
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    result = content_text(next(m for m in server.requests[-1]["messages"] if m["role"] == "tool"))
    assert "<summary>completed: 2, failed: 0</summary>" in result, result
    assert 'item="a" outcome="completed">done a</subagent>' in result
    assert isinstance(backend, RayChildren)
    assert set(backend.placed.values()) == node_ids(two_nodes)
    assert len(node_ids(two_nodes)) == 2
