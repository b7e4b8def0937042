"""AgentSwarm's checks (the reference's case 52): every refusal is an error result that
says what to fix, and no sub-agent starts; the sole-call veto through the executor."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from deftly.execution import Outcome
from tests.swarm.helpers import FakeBackend, swarm_runtime


def swarm(**arguments: Any) -> dict[str, Any]:
    arguments.setdefault("description", "review files")
    return arguments


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            swarm(prompt_template="Review {{item}}", items=[f"f{n}" for n in range(129)]),
            "at most 128",
        ),
        (
            swarm(
                prompt_template="Review {{item}}",
                items=[f"f{n}" for n in range(100)],
                resume_agent_ids={f"old-{n}": "continue" for n in range(29)},
            ),
            "at most 128 sub-agents in one call, and this call asks for 129",
        ),
        (swarm(prompt_template="Review {{item}}", items=["only"]), "at least 2 items"),
        (swarm(prompt_template="Review {{item}}"), "at least 2 items"),
        (swarm(items=["a", "b"]), "prompt_template is required when items are given"),
        (swarm(prompt_template="Review files", items=["a", "b"]), "{{item}} placeholder"),
        (swarm(prompt_template="Review {{ item }}", items=["a", "b"]), "{{item}} placeholder"),
        (
            swarm(prompt_template="Review {{item}}", items=["same", "x", "same"]),
            "Items 1 and 3 give the same prompt",
        ),
        (
            swarm(prompt_template="Review {{item}}", items=["same ", " same"]),
            "Items 1 and 2 give the same prompt",
        ),
        (swarm(prompt_template="Review {{item}}", items=["a", "   "]), "Item 2 is blank"),
        (swarm(description="   ", prompt_template="R {{item}}", items=["a", "b"]), "blank"),
        (
            swarm(subagent_type="wizard", prompt_template="R {{item}}", items=["a", "b"]),
            'no sub-agent type "wizard". Available types: coder, explore',
        ),
        (swarm(resume_agent_ids={"ghost": "continue"}), 'no sub-agent "ghost"'),
        (swarm(resume_agent_ids={"earlier": "  "}), "blank prompt"),
        (swarm(items=["a", "b"], prompt_template="R {{item}}", extra=1), "extra"),
    ],
    ids=[
        "129 items",
        "129 with resumes",
        "one item",
        "no items",
        "items without template",
        "template without placeholder",
        "spaced placeholder",
        "duplicate prompts",
        "duplicates after trimming",
        "blank item",
        "blank description",
        "unknown type",
        "unknown resume",
        "blank resume prompt",
        "unknown argument",
    ],
)
async def test_a_refused_swarm_starts_nothing(
    make_runtime: Callable[..., Any], arguments: dict[str, Any], expected: str
) -> None:
    backend = FakeBackend(earlier={"earlier"})
    runtime = await swarm_runtime(make_runtime, backend)
    result = await runtime.call("AgentSwarm", arguments)
    assert result.is_error, result.text
    assert expected in result.text
    assert backend.specs == []


async def test_one_resume_and_no_items_is_a_swarm(make_runtime: Callable[..., Any]) -> None:
    backend = FakeBackend(earlier={"swarm-abc-2"})
    runtime = await swarm_runtime(make_runtime, backend)
    result = await runtime.call("AgentSwarm", swarm(resume_agent_ids={"swarm-abc-2": "continue"}))
    assert not result.is_error, result.text
    [spec] = backend.specs
    assert spec.resume and spec.agent_id == "swarm-abc-2" and spec.prompt == "continue"
    assert 'mode="resume" agent_id="swarm-abc-2" outcome="completed"' in result.text


async def test_a_running_sub_agent_is_not_resumed(make_runtime: Callable[..., Any]) -> None:
    backend = FakeBackend(running={"busy"})
    runtime = await swarm_runtime(make_runtime, backend)
    result = await runtime.call("AgentSwarm", swarm(resume_agent_ids={"busy": "continue"}))
    assert result.is_error and "is running now" in result.text
    assert backend.specs == []


async def test_two_swarms_in_one_reply_are_both_refused(make_runtime: Callable[..., Any]) -> None:
    backend = FakeBackend()
    runtime = await swarm_runtime(make_runtime, backend)
    one = swarm(prompt_template="Review {{item}}", items=["a", "b"])
    other = swarm(prompt_template="Test {{item}}", items=["a", "b"])
    results = await runtime.run_batch(
        [
            {"id": "s1", "name": "AgentSwarm", "arguments": json.dumps(one)},
            {"id": "s2", "name": "AgentSwarm", "arguments": json.dumps(other)},
        ]
    )
    for result in results:
        assert result.is_error and result.outcome is Outcome.VETOED
        assert "one at a time" in result.text
    assert backend.specs == []


async def test_a_swarm_with_another_call_is_refused_and_the_other_runs(
    make_runtime: Callable[..., Any], workspace: Any
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    backend = FakeBackend()
    runtime = await swarm_runtime(make_runtime, backend)
    arguments = swarm(prompt_template="Review {{item}}", items=["a", "b"])
    first, second = await runtime.run_batch(
        [
            {"id": "s1", "name": "AgentSwarm", "arguments": json.dumps(arguments)},
            {"id": "r1", "name": "Read", "arguments": json.dumps({"path": "notes.txt"})},
        ]
    )
    assert first.is_error and "must be the only tool call" in first.text and "Read" in first.text
    assert not second.is_error and "hello" in second.text
    assert backend.specs == []


async def test_without_a_backend_it_is_not_offered_nor_run(
    make_runtime: Callable[..., Any],
) -> None:
    from tests.swarm.helpers import FEATURES

    runtime = await make_runtime(features=FEATURES)
    assert "AgentSwarm" in runtime.agent.registry.names()
    assert "AgentSwarm" not in [e.name for e in runtime.agent.offered()]
    result = await runtime.call(
        "AgentSwarm", swarm(prompt_template="Review {{item}}", items=["a", "b"])
    )
    assert result.is_error and result.outcome is Outcome.PREFLIGHT_REJECTED


async def test_the_schema_and_the_description(make_runtime: Callable[..., Any]) -> None:
    runtime = await swarm_runtime(make_runtime, FakeBackend())
    entry = runtime.agent.registry.get("AgentSwarm")
    assert entry is not None
    schema = entry.tool.parameters
    assert schema["required"] == ["description"]
    assert schema["properties"]["items"]["anyOf"][0]["maxItems"] == 128
    assert schema["additionalProperties"] is False
    text = entry.tool.description
    assert "{{item}}" in text and "128" in text and "4 run at a time" in text
    assert "- coder: Writes and changes code." in text and "- explore:" in text
