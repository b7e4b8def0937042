"""Each OpenAI-compatible server quirk, through a whole turn of two steps with parallel
calls: the calls run once each, results pair with unique ids, the turn ends normally."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deftly.agent import Agent
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, Reply, Say, Think
from tests.scripted.server import ModelServer

QUIRKS = [
    "repeat_id_name",
    "whole_arguments",
    "missing_ids",
    "same_id",
    "usage_in_every_chunk",
    "usage_final_chunk",
    "reasoning_field",
    "no_role",
    "missing_index",
]


@pytest.mark.parametrize("quirk", QUIRKS)
async def test_a_turn_works_whatever_the_server_quirk(
    quirk: str, make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    runtime = await make_runtime()
    quirks = frozenset({quirk})
    steps = [
        Reply(
            (
                Think("let me read"),
                Call("Read", {"path": str(workspace / "a.txt")}),
                Call("Read", {"path": str(workspace / "b.txt")}),
            ),
            chunk=3,
            quirks=quirks,
        ),
        Reply((Call("Glob", {"pattern": "*.txt"}),), chunk=3, quirks=quirks),
        Reply((Say("alpha and beta"),), chunk=3, quirks=quirks),
    ]
    with ModelServer(steps) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "read both")
        await agent.aclose()
    assert (turn.end.stop_reason, turn.end.steps, turn.end.text) == (
        "end_turn",
        3,
        "alpha and beta",
    )
    last = server.requests[2]
    results = tool_messages(last)
    ids = [m["tool_call_id"] for m in results]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert "alpha" in content_text(results[0]) and "beta" in content_text(results[1])
    assert "a.txt" in content_text(results[2])
    called = [
        call["id"]
        for message in last["messages"]
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or ()
    ]
    assert called == ids
    assert "content" not in [k for m in last["messages"] for k, v in m.items() if v is None]
    if quirk.startswith("usage"):
        assert turn.end.usage.input_tokens == 300
