"""`[agents] backend = "ray"` in a config file reaches the Ray backend through `deftly run`:
the command joins the test's Ray (`ray_address`) and its child runs there as a Ray task;
an address nobody answers on fails the Agent call in seconds, saying why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents.helpers import Router, agent_call, tool_results
from tests.cli_run.helpers import deftly_run, json_lines, user_config
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer
from tests.swarm.ray_cluster import gcs_address, ray_instance

pytestmark = [pytest.mark.ray, pytest.mark.local_env]
__all__ = ["ray_instance"]  # the module's Ray (a fixture)


def ray_config(address: str) -> str:
    return f'[agents]\nbackend = "ray"\nray_address = "{address}"\nray_num_cpus = 0.5\n'


def test_a_config_file_sends_the_child_to_ray(workspace: Path, ray_instance: Any) -> None:
    user_config(ray_config(gcs_address(ray_instance)))
    router = Router(
        parent=[calls(agent_call("MARK-R: write ray.txt")), say("The child wrote it.")],
        children={
            "MARK-R": [
                calls(Call("Write", {"path": "ray.txt", "content": "from a Ray task\n"})),
                say("ray.txt is written."),
            ]
        },
    )
    with ModelServer(router) as server:
        done = deftly_run(server, workspace, "--json", "delegate it")
    assert done.returncode == 0, done.stderr
    assert (workspace / "ray.txt").read_text() == "from a Ray task\n"
    lines = json_lines(done.stdout)
    types = [line["type"] for line in lines]
    begin, end = types.index("subagent_start"), types.index("subagent_end")
    assert lines[end]["status"] == "completed" and lines[end]["text"] == "ray.txt is written."
    # the Ray backend reports a child's start and end, not its steps (the local one
    # streams the child's Write between them)
    assert lines[begin + 1 : end] == []
    child = lines[begin]["agent_id"]
    assert set(lines[-1]["usage_by_agent"]) == {"main", child}
    # the child's own calls went to the server from the Ray worker: its Write result
    [write_result] = tool_results(router.seen["MARK-R"][1])
    assert "ray.txt" in write_result


def test_an_unreachable_ray_address_fails_the_agent_call_saying_why(workspace: Path) -> None:
    user_config(ray_config("127.0.0.1:9"))
    router = Router(
        parent=[calls(agent_call("MARK-U: anything")), say("I will do it myself.")],
        children={},
    )
    with ModelServer(router) as server:
        done = deftly_run(server, workspace, "delegate it")
    assert done.returncode == 0, done.stderr
    [result] = tool_results(router.seen["parent"][1])
    assert "Could not start the Ray cluster at 127.0.0.1:9" in result
    assert "nothing accepts connections" in result and 'backend = "local"' in result
    assert "Traceback" not in done.stderr
    assert "MARK-U" not in router.seen
