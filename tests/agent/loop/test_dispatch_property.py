"""Property: streaming dispatch keeps the batch guarantees. For random replies (text and
calls in random order, random chunking, random accesses), every call runs exactly once,
results come back in call order, and calls that conflict never overlap and keep the
model's order. A call whose tool must be alone in its reply (AgentSwarm's trait) is held
until the reply is complete, and runs only when it is the reply's only call: otherwise it
is refused and the other calls run as usual."""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from deftly import Runtime
from deftly.agent import Agent
from deftly.contract import Accesses, Tool, ToolContext, ToolExecution, ToolResult
from deftly.contract.accesses import Operation
from deftly.contract.traits import ToolTraits
from tests.agent.loop.helpers import openai_provider, tool_messages
from tests.scripted.script import Call, Reply, Say, say
from tests.scripted.server import ModelServer


class ProbeArgs(BaseModel):
    """Which file the probe touches, how, and a tag naming the call."""

    model_config = ConfigDict(extra="forbid")
    path: str
    op: str
    tag: str
    yields: int = 1


@dataclass
class Span:
    tag: str
    path: str
    op: str
    start: int
    end: int = -1


class Probe(Tool[ProbeArgs]):
    """Records when each call starts and ends on a shared clock (a counter)."""

    name = "Probe"
    description = "Touches a file, for the property test."
    params = ProbeArgs

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = 0
        self.spans: list[Span] = []

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def resolve(self, args: ProbeArgs) -> ToolExecution:
        operation = Operation.WRITE if args.op == "write" else Operation.READ

        async def execute(ctx: ToolContext) -> ToolResult:
            span = Span(args.tag, args.path, args.op, self.tick())
            self.spans.append(span)
            for _ in range(args.yields):
                await asyncio.sleep(0)
            span.end = self.tick()
            return ToolResult.ok(f"done {args.tag}")

        return ToolExecution(
            approval_rule="Probe",
            accesses=Accesses.file(operation, self.root / args.path),
            execute=execute,
        )


class LoneArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str


class Lone(Tool[LoneArgs]):
    """Must be the only call of its reply; records its runs on the probe's clock."""

    name = "Lone"
    description = "Must be called alone, for the property test."
    params = LoneArgs
    traits = ToolTraits(alone_in_reply=True)

    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.ran: list[str] = []

    def resolve(self, args: LoneArgs) -> ToolExecution:
        def execute(ctx: ToolContext) -> ToolResult:
            self.ran.append(args.tag)
            return ToolResult.ok(f"done {args.tag}")

        return ToolExecution(approval_rule="Lone", accesses=Accesses.all(), execute=execute)


item = st.one_of(
    st.just("lone"),
    st.builds(Say, st.text("abc xyz", min_size=1, max_size=12)),
    st.tuples(
        st.sampled_from(["a", "b", "c"]), st.sampled_from(["read", "write"]), st.integers(0, 5)
    ),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(items=st.lists(item, min_size=1, max_size=8), chunk=st.integers(1, 40))
def test_streaming_dispatch_keeps_the_batch_guarantees(
    items: list[Any], chunk: int, isolated_home: Path
) -> None:
    asyncio.run(_check(items, chunk))


async def _check(items: list[Any], chunk: int) -> None:
    script_items: list[Any] = []
    tags: list[str] = []
    lones: list[str] = []
    for n, entry in enumerate(items):
        if isinstance(entry, Say):
            script_items.append(entry)
            continue
        if entry == "lone":
            lones.append(f"l{n}")
            script_items.append(Call("Lone", {"tag": f"l{n}"}))
            continue
        path, op, yields = entry
        tag = f"t{n}"
        tags.append(tag)
        script_items.append(Call("Probe", {"path": path, "op": op, "tag": tag, "yields": yields}))
    if not tags and not lones:
        script_items.append(Call("Probe", {"path": "a", "op": "read", "tag": "t99", "yields": 0}))
        tags.append("t99")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        probe = Probe(root)
        lone = Lone(probe)
        runtime = Runtime(root, tools=[probe, lone], config={}, plugins=False, approve_asks=True)
        async with runtime:
            with ModelServer([Reply(tuple(script_items), chunk=chunk), say("end")]) as server:
                agent = Agent(runtime, openai_provider(server))
                result = await agent.run("go")
                await agent.aclose()
    assert result.stop_reason == "end_turn"
    # exactly once each, and the results in the model's call order
    assert sorted(s.tag for s in probe.spans) == sorted(tags)
    results = {r["tool_call_id"]: r["content"] for r in tool_messages(server.requests[1])}
    sent = [m for m in server.requests[1]["messages"] if m.get("tool_calls")][-1]
    ids = {json.loads(c["function"]["arguments"])["tag"]: c["id"] for c in sent["tool_calls"]}
    assert [results[ids[t]] for t in tags] == [f"done {t}" for t in tags]
    # the lone call runs only when it is the reply's only call; else it is refused
    if len(lones) == 1 and not tags:
        assert lone.ran == lones and results[ids[lones[0]]] == f"done {lones[0]}"
    else:
        assert lone.ran == []
        refusal = "one at a time" if len(lones) > 1 else "must be the only tool call"
        assert all(refusal in results[ids[tag]] for tag in lones)
    # conflicting calls never overlap, and the earlier one (in call order) goes first
    order = {tag: i for i, tag in enumerate(tags)}
    spans = sorted(probe.spans, key=lambda s: order[s.tag])
    for i, first in enumerate(spans):
        for second in spans[i + 1 :]:
            if first.path == second.path and "write" in (first.op, second.op):
                assert first.end < second.start, (first, second)
