"""Deferred disclosure: select_tools, the shaped tool list and announcements (cases 38-40)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Outcome, Runtime, ToolContext
from deftly.features import disclosure as meta
from deftly.features.disclosure.disclosure import DeferredTools
from tests.helpers import EchoTool
from tests.mcp.conftest import fake


async def runtime(workspace: Path, tmp_path: Path, **mcp: Any) -> Runtime:
    rt = Runtime(
        workspace,
        config={
            "mcp": {"servers": {"srv": fake("--calls-file", str(tmp_path / "calls"))}, **mcp},
            "tools": {"disabled": ["mcp__srv__fail"]},
        },
        tools=[EchoTool, *meta.CONTRIBUTIONS],
        builtins=False,
        plugins=False,
        approve_asks=True,  # these tests are about disclosure, not permissions
    )
    await rt.start()

    def notes(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"noted {args.get('text')}"

    rt.register_host_tool(
        "Notes",
        "Take a note.",
        {"type": "object", "properties": {"text": {"type": "string"}}},
        notes,
        disclosure="deferred",
    )
    return rt


def names(rt: Runtime) -> list[str]:
    return [t.name for t in rt.model_tools().tools]


async def test_with_the_gate_closed_every_tool_is_inline(workspace: Path, tmp_path: Path) -> None:
    rt = await runtime(workspace, tmp_path)
    try:
        assert "select_tools" not in [t.name for t in rt.tools()]
        shaped = rt.model_tools()
        assert shaped.announcement is None and shaped.deferred == []
        assert {"Echo", "Notes", "mcp__srv__echo"} <= {t.name for t in shaped.tools}
        result = await rt.call("mcp__srv__echo", {"text": "direct"})
        assert result.text == "direct"
    finally:
        await rt.close()


async def test_deferred_tools_are_announced_and_loaded_on_demand(
    workspace: Path, tmp_path: Path
) -> None:
    rt = await runtime(workspace, tmp_path, select_tools=True)
    try:
        entry = rt.registry.get("mcp__srv__echo")
        assert entry is not None and entry.disclosure == "deferred"

        first = rt.model_tools()
        assert [t.name for t in first.tools] == ["Echo", "select_tools"]
        assert first.announcement is not None
        added = first.announcement.split("<tools_added>\n")[1].split("\n</tools_added>")[0]
        assert added.splitlines() == first.deferred
        assert "Notes" in first.deferred and "mcp__srv__echo" in first.deferred
        assert "mcp__srv__fail" not in added  # switched off by the tool policy
        assert "select_tools" in first.announcement
        assert rt.model_tools().announcement is None  # nothing new since

        # Calling before loading: refused before the arguments are even looked at.
        early = await rt.call("mcp__srv__echo", {"wrong": 1})
        assert early.is_error and early.outcome is Outcome.PREFLIGHT_REJECTED
        assert 'select_tools with {"names": ["mcp__srv__echo"]}' in early.text
        assert not (tmp_path / "calls").exists()

        loaded = await rt.call(
            "select_tools", {"names": ["mcp__srv__echo", "Notes", "mcp__srv__gone", "Echo"]}
        )
        assert not loaded.is_error
        assert loaded.text.splitlines() == [
            "Loaded: mcp__srv__echo, Notes",
            "Already available: Echo",
            "Unknown tool: mcp__srv__gone. Use exact names from the latest list of deferred tools.",
        ]
        assert names(rt) == ["Echo", "mcp__srv__echo", "Notes", "select_tools"]

        again = await rt.call("select_tools", {"names": ["mcp__srv__echo"]})
        assert (again.is_error, again.text) == (False, "Already available: mcp__srv__echo")

        only_unknown = await rt.call("select_tools", {"names": ["nope", "mcp__srv__fail"]})
        assert only_unknown.is_error
        assert only_unknown.text.count("Unknown tool:") == 2

        empty = await rt.call("select_tools", {"names": []})
        assert empty.is_error and empty.outcome is Outcome.PREFLIGHT_REJECTED

        ran = await rt.call("mcp__srv__echo", {"text": "loaded"})
        assert ran.text == "loaded"
        noted = await rt.call("Notes", {"text": "x"})
        assert noted.text == "noted x"
    finally:
        await rt.close()


async def test_removed_tools_are_announced_as_removed(workspace: Path, tmp_path: Path) -> None:
    rt = await runtime(workspace, tmp_path, select_tools=True)
    try:
        assert rt.model_tools().announcement is not None
        remove = rt.register_host_tool(
            "Gamma", "G.", {"type": "object"}, lambda a, c: "g", disclosure="deferred"
        )
        rt.registry.unregister("Notes")
        change = rt.model_tools().announcement
        assert change is not None
        assert "<tools_added>\nGamma\n</tools_added>" in change
        assert "<tools_removed>\nNotes\n</tools_removed>" in change
        remove()
        assert "<tools_removed>\nGamma\n</tools_removed>" in (rt.model_tools().announcement or "")
        rt.service(DeferredTools).reset()
        assert "mcp__srv__echo" in (rt.model_tools().announcement or "")
    finally:
        await rt.close()


async def test_mcp_tools_can_stay_inline_when_select_tools_is_on(
    workspace: Path, tmp_path: Path
) -> None:
    rt = await runtime(workspace, tmp_path, select_tools=True, defer_mcp_tools=False)
    try:
        shaped = rt.model_tools()
        assert "mcp__srv__echo" in [t.name for t in shaped.tools]
        assert shaped.deferred == ["Notes"]
    finally:
        await rt.close()
