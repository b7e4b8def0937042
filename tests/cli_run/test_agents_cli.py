"""`deftly run --json` with a sub-agent: the child's events are lines of their own, each
with the child's agent_id, between its subagent_start and subagent_end; one turn_end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.helpers import Router, agent_call
from tests.cli_run.helpers import deftly_run, json_lines
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env


def test_json_shows_a_childs_events_with_its_agent_id(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    router = Router(
        parent=[
            calls(agent_call("MARK-J: what is in a.txt?", subagent_type="explore")),
            say("It holds alpha."),
        ],
        children={"MARK-J": [calls(Call("Read", {"path": "a.txt"})), say("a.txt holds alpha.")]},
    )
    with ModelServer(router) as server:
        done = deftly_run(server, workspace, "--json", "ask a child")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    types = [line["type"] for line in lines]
    assert types[0] == "turn_start" and types[-1] == "turn_end" and types.count("turn_end") == 1
    start = next(line for line in lines if line["type"] == "subagent_start")
    child = start["agent_id"]
    assert child.startswith("explore-") and start["parent_id"] == "main"
    assert start["profile"] == "explore" and start["prompt"] == "MARK-J: what is in a.txt?"
    begin, end = types.index("subagent_start"), types.index("subagent_end")
    inside = lines[begin + 1 : end]
    assert inside and all(line["agent_id"] == child for line in inside)
    assert [(line["type"], line.get("name")) for line in inside if "name" in line] == [
        ("tool_call", "Read"),
        ("tool_result", "Read"),
    ]
    assert lines[end]["status"] == "completed" and lines[end]["text"] == "a.txt holds alpha."
    agent_results = [
        line for line in lines if line["type"] == "tool_result" and line["name"] == "Agent"
    ]
    assert [line["agent_id"] for line in agent_results] == ["main"]
    assert "[summary]\na.txt holds alpha." in agent_results[0]["output"]
    turn_end = lines[-1]
    assert set(turn_end["usage_by_agent"]) == {"main", child}
    assert turn_end["total_usage"]["input_tokens"] == 400  # four requests of 100
