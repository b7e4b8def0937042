"""Properties over random input: nothing a model sends can break a batch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from deftly import Accesses, Runtime, Tool, ToolContext, ToolExecution, ToolResult
from deftly.contract import Operation
from deftly.contract.accesses import accesses_conflict
from tests.helpers import BigTool, BrokenTool, EchoTool, SleepTool

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
raw_arguments = st.one_of(
    st.none(),
    st.text(max_size=60),
    json_values.map(json.dumps),
    st.dictionaries(
        st.sampled_from(["path", "text", "how", "chars", "x", "seconds"]), json_values, max_size=4
    ),
)


def names_of(rt: Runtime) -> list[str]:
    return [t.name for t in rt.tools()]


TRICKY_PATHS = st.sampled_from(
    ["a.txt", "sub/b.py", "", "  ", "../outside", "/etc/passwd", "~", ".env", "x\x00y", ".", "*"]
)


def value_for(name: str, schema: Any) -> st.SearchStrategy[Any]:
    """A value shaped like the schema says (often valid, sometimes not quite)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if "enum" in (schema or {}):
        return st.sampled_from(schema["enum"]) | json_values
    if kind == "string":
        return TRICKY_PATHS | st.text(max_size=30) if "path" in name else st.text(max_size=30)
    if kind == "integer":
        return st.integers(min_value=-5, max_value=2_000_000)
    if kind == "number":
        return st.floats(min_value=-5, max_value=1e6, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(st.text(max_size=12), max_size=3)
    return json_values


def shaped_arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {
        name: value_for(name, sub) if name in required else st.none() | value_for(name, sub)
        for name, sub in properties.items()
    }
    return st.fixed_dictionaries(fields).map(
        lambda d: {k: v for k, v in d.items() if v is not None or k in required}
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_schema_shaped_payloads_for_every_tool_never_escape_run_batch(
    workspace: Path, data: st.DataObject
) -> None:
    """Arguments shaped by each built-in tool's own schema, so calls get past validation and
    into resolve and execute (manual mode: calls that need approval are refused, so no
    random shell command ever runs)."""
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    (workspace / "sub").mkdir(exist_ok=True)
    (workspace / "sub" / "b.py").write_text("print('b')\n")

    async def scenario() -> None:
        async with Runtime(workspace, config={}, plugins=False) as rt:
            rt.agent.executor.grace_seconds = 0.05
            tools = rt.tools()
            picks = data.draw(st.lists(st.sampled_from(tools), min_size=1, max_size=5))
            calls = [
                {
                    "id": f"c{i}",
                    "name": t.name,
                    "arguments": data.draw(shaped_arguments(t.parameters)),
                }
                for i, t in enumerate(picks)
            ]
            results = await asyncio.wait_for(rt.run_batch(calls), timeout=60)
            assert [r.tool_call_id for r in results] == [c["id"] for c in calls]
            for result in results:
                assert result.text.strip() or not isinstance(result.result.output, str)
                assert "Traceback" not in result.text

    asyncio.run(scenario())


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batch=st.lists(
        st.tuples(st.integers(min_value=0, max_value=50), raw_arguments), min_size=1, max_size=6
    )
)
def test_random_payloads_for_every_tool_never_escape_run_batch(
    workspace: Path, batch: list[tuple[int, Any]]
) -> None:
    """Every built-in tool plus the test tools; bad input is always an error result."""

    async def scenario() -> None:
        async with Runtime(
            workspace, config={}, plugins=False, tools=[EchoTool, SleepTool, BigTool, BrokenTool]
        ) as rt:
            rt.agent.executor.grace_seconds = 0.05
            names = [*names_of(rt), "NoSuchTool"]
            calls = [
                {"id": f"c{i}", "name": names[index % len(names)], "arguments": args}
                for i, (index, args) in enumerate(batch)
            ]
            results = await asyncio.wait_for(rt.run_batch(calls), timeout=60)
            assert [r.tool_call_id for r in results] == [c["id"] for c in calls]
            for result in results:
                assert isinstance(result.result.output, str | list)
                if result.is_error:
                    assert result.text.strip()

    asyncio.run(scenario())


PATHS = ["/w/a", "/w/b", "/w/d", "/w/d/x", "/w"]


class ProbeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    index: int


class ProbeTool(Tool[ProbeParams]):
    """Declares the accesses the test gives it and checks no conflicting call overlaps."""

    name = "Probe"
    description = "probe"
    params = ProbeParams

    def __init__(self) -> None:
        self.plan: list[Accesses | None] = []
        self.running: dict[int, Accesses | None] = {}
        self.violations: list[tuple[int, int]] = []

    def resolve(self, args: ProbeParams) -> ToolExecution:
        return ToolExecution(
            approval_rule=self.name,
            accesses=self.plan[args.index],
            execute=lambda ctx: self._run(ctx, args.index),
        )

    async def _run(self, ctx: ToolContext, index: int) -> ToolResult:
        mine = self.plan[index]
        for other, theirs in self.running.items():
            if _conflict(mine, theirs):
                self.violations.append((other, index))
        self.running[index] = mine
        await asyncio.sleep(0.001 * (index % 3))
        del self.running[index]
        return ToolResult.ok(str(index))


def _conflict(a: Accesses | None, b: Accesses | None) -> bool:
    if (a is not None and not a.items) or (b is not None and not b.items):
        return False
    left, right = a or Accesses.all(), b or Accesses.all()
    return any(accesses_conflict(x, y) for x in left.items for y in right.items)


access = st.builds(
    lambda op, path, rec: Accesses.file(op, path, recursive=rec),
    st.sampled_from(list(Operation)),
    st.sampled_from(PATHS),
    st.booleans(),
)
plans = st.lists(
    st.one_of(st.none(), st.just(Accesses.none()), access, access), min_size=1, max_size=25
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans)
def test_random_batches_never_run_conflicting_calls_together(
    workspace: Path, plan: list[Accesses | None]
) -> None:
    async def scenario() -> None:
        probe = ProbeTool()
        probe.plan = plan
        async with Runtime(
            workspace, config={}, plugins=False, builtins=False, tools=[probe], approve_asks=True
        ) as rt:
            results = await rt.run_batch(
                [
                    {"id": str(i), "name": "Probe", "arguments": {"index": i}}
                    for i in range(len(plan))
                ]
            )
        assert [r.text for r in results] == [str(i) for i in range(len(plan))]
        assert probe.violations == []

    asyncio.run(scenario())
