"""The guards treat a new tool by the traits it declares, exactly like the built-in tool
with the same traits: plan mode (file writes, stopping tasks, scheduling work, unreadable
traits), Bash's background mode, and host tools that declare traits."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Outcome, Runtime, ToolTraits
from deftly.registry.host import HostTool
from tests.helpers import WriteTool
from tests.traits.tools import (
    HaltTool,
    JotTool,
    PeekTaskTool,
    RemindLaterTool,
    ShapelessTool,
    ToolShelfTool,
)

PLAN = "# Plan\n\n1. Change src/app.py\n"


@pytest.fixture
def ws(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


async def planning(make_runtime: Any, **kwargs: Any) -> tuple[Runtime, str]:
    """A runtime with the new tools, nobody to ask, in plan mode; and its plan file."""
    kwargs.setdefault("approve_asks", False)
    tools = [WriteTool, JotTool, HaltTool, RemindLaterTool, ShapelessTool, ToolShelfTool]
    rt: Runtime = await make_runtime(tools=tools, **kwargs)
    entered = await rt.call("EnterPlanMode", {})
    assert not entered.is_error, entered.text
    found = re.search(r"Plan file: (\S+)", entered.text)
    assert found, entered.text
    return rt, found.group(1)


@pytest.mark.parametrize("tool", ["Write", "Jot"])
async def test_a_file_writing_tool_may_write_only_the_plan_file(
    make_runtime: Any, ws: Path, tool: str
) -> None:
    rt, plan = await planning(make_runtime)
    wrote = await rt.call(tool, {"path": plan, "content": PLAN})
    assert not wrote.is_error, f"{tool} writes the plan file unasked: {wrote.text}"
    assert Path(plan).read_text() == PLAN
    other = await rt.call(tool, {"path": "src/app.py", "content": "x"})
    assert other.is_error and other.outcome is Outcome.VETOED
    assert f"Plan mode is on: {tool} may only write the plan file" in other.text
    assert plan in other.text and not (ws / "src/app.py").exists()


async def test_out_of_plan_mode_the_new_writer_follows_the_normal_permissions(
    make_runtime: Any, ws: Path
) -> None:
    rt: Runtime = await make_runtime(tools=[JotTool], approve_asks=False)
    wrote = await rt.call("Jot", {"path": "new.txt", "content": "x"})
    assert not wrote.is_error and (ws / "new.txt").read_text() == "x", "a new file: restorable"


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ("Halt", "if a background task really has to be stopped"),
        ("RemindLater", "it would change scheduled work that runs after planning"),
        ("Shapeless", "does not declare what it does"),
    ],
)
async def test_stopping_scheduling_and_undeclared_tools_are_refused_while_planning(
    make_runtime: Any, ws: Path, tool: str, says: str
) -> None:
    rt, _plan = await planning(make_runtime, approve_asks=True)
    refused = await rt.call(tool, {"text": "x"})
    assert refused.is_error and refused.outcome is Outcome.VETOED, refused.text
    assert says in refused.text and "ExitPlanMode" in refused.text
    assert not (await rt.call("ToolShelf", {"text": "x"})).is_error, "read-only: runs"


async def test_the_same_tools_run_when_plan_mode_is_off(make_runtime: Any, ws: Path) -> None:
    rt: Runtime = await make_runtime(tools=[HaltTool, RemindLaterTool, ShapelessTool])
    for tool in ("Halt", "RemindLater", "Shapeless"):
        ran = await rt.call(tool, {"text": "x"})
        assert not ran.is_error and f"{tool} ran with x" in ran.text, ran.text


async def test_a_host_tool_declaring_writes_files_is_kept_from_writing_while_planning(
    make_runtime: Any, ws: Path
) -> None:
    rt, _plan = await planning(make_runtime, approve_asks=True)
    calls: list[dict[str, Any]] = []

    def save(args: dict[str, Any], ctx: Any) -> str:
        calls.append(args)
        return "saved"

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    rt.register_host_tool(
        "Save", "Save a file.", schema, save, traits=ToolTraits(writes_files=True)
    )
    rt.register_tool(HostTool("Note", "Take a note.", schema, save), source="user")
    refused = await rt.call("Save", {"path": "a.txt"})
    assert refused.is_error and "Save may only write the plan file" in refused.text
    assert calls == [], "it declares no paths, so it cannot be shown to write only the plan"
    assert not (await rt.call("Note", {"path": "a.txt"})).is_error, "no trait: not blocked"
    assert calls == [{"path": "a.txt"}]


async def test_bash_offers_background_mode_by_the_traits_of_what_is_registered(
    make_runtime: Any, ws: Path
) -> None:
    disabled = {"tools": {"disabled": ["TaskStop", "TaskOutput"]}}
    rt: Runtime = await make_runtime(config=disabled)
    refused = await rt.call("Bash", {"command": "echo x", "run_in_background": True})
    assert refused.is_error and "not available" in refused.text
    rt.register_tool(HaltTool(), source="user")
    still = await rt.call("Bash", {"command": "echo x", "run_in_background": True})
    assert still.is_error and "not available" in still.text, "nothing reads task output yet"
    rt.register_tool(PeekTaskTool(), source="user")
    started = await rt.call("Bash", {"command": "echo x", "run_in_background": True})
    assert not started.is_error, started.text


def test_each_built_in_declares_the_traits_its_guards_read() -> None:
    from deftly.features.disclosure.select_tools import SelectTools
    from deftly.features.files.edit import EditTool
    from deftly.features.files.write import WriteTool as BuiltinWrite
    from deftly.features.plan.exit_plan_mode import ExitPlanModeTool
    from deftly.features.shell.bash import BashTool
    from deftly.features.shell.task_output import TaskOutputTool
    from deftly.features.shell.task_stop import TaskStopTool

    assert BuiltinWrite.traits.writes_files and EditTool.traits.writes_files
    assert TaskStopTool.traits.stops_tasks and TaskOutputTool.traits.reads_task_output
    assert ExitPlanModeTool.traits.exits_plan_mode and SelectTools.traits.discloses_tools
    bash = BashTool.traits
    assert not (bash.writes_files or bash.read_only), "plan mode judges Bash per command"


def test_an_mcp_server_cannot_claim_the_guard_traits() -> None:
    import mcp.types as mt

    from deftly.contract.traits import traits_of
    from deftly.features.mcp.tool import traits_from

    every_hint = mt.ToolAnnotations(
        read_only_hint=True, destructive_hint=True, idempotent_hint=True, open_world_hint=True
    )
    traits = traits_from(every_hint, trust=True)
    assert traits.read_only and traits.idempotent and not traits.destructive
    guard_traits = (
        traits.writes_files,
        traits.schedules_work,
        traits.stops_tasks,
        traits.reads_task_output,
        traits.exits_plan_mode,
        traits.discloses_tools,
    )
    assert not any(guard_traits), "MCP annotations say nothing of these"
    assert traits_of(ShapelessTool()) is None and traits_of(HaltTool()) == HaltTool.traits
