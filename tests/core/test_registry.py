"""Contributions, activation, injection by type, plugins and "module:Class" tools."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime, ToolDeclined
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ToolLoadError
from deftly.env import ExecEnv
from deftly.features import builtin_contributions
from deftly.policy import ToolPolicy, Workspace
from deftly.registry import (
    Activation,
    Profile,
    Services,
    ToolContribution,
    ToolRegistry,
    build,
    load_tool_path,
)
from deftly.registry.registry import tool_sort_key
from tests.helpers import EchoTool, SleepTool

built: list[str] = []


class Alpha(EchoTool):
    name = "Alpha"

    def __init__(self) -> None:
        built.append("Alpha")


class Beta(EchoTool):
    name = "Beta"

    def __init__(self) -> None:
        built.append("Beta")


class Gamma(EchoTool):
    name = "Gamma"


class Declining(EchoTool):
    name = "Declining"

    def __init__(self) -> None:
        raise ToolDeclined("no search provider configured")


class NeedsEnv(EchoTool):
    name = "NeedsEnv"

    def __init__(self, env: ExecEnv, limit: int = 3) -> None:
        self.env = env
        self.limit = limit


def activation(caps: set[str] | None = None, **kw: Any) -> Activation:
    return Activation(
        ToolRegistry(), Services(), frozenset({"fs", "process"} if caps is None else caps), **kw
    )


@pytest.fixture(autouse=True)
def reset_built() -> None:
    built.clear()


def test_allow_list_filters_and_filtered_tools_are_never_built() -> None:
    contributions = [ToolContribution.of(Alpha), ToolContribution.of(Beta)]
    everything = activation()
    assert everything.activate(contributions) == ["Alpha", "Beta"]
    built.clear()
    only_alpha = activation(profile=Profile(tools=("Alpha",)))
    assert only_alpha.activate(contributions) == ["Alpha"]
    assert built == ["Alpha"]


def test_disallowed_tools_when_and_tool_policy() -> None:
    contributions = [
        ToolContribution.of(Alpha),
        ToolContribution.of(Beta, when=lambda services: False),
        ToolContribution.of(Gamma),
    ]
    act = activation(
        profile=Profile(disallowed_tools=("Alpha",)), policy=ToolPolicy(disabled=("Gamma",))
    )
    assert act.activate(contributions) == []
    assert built == []


def test_capabilities_gate_tools() -> None:
    contributions = [
        ToolContribution.of(Alpha, requires={"fs"}),
        ToolContribution.of(Beta, requires={"process"}),
        ToolContribution.of(Gamma),
    ]
    assert activation({"process"}).activate(contributions) == ["Beta", "Gamma"]
    assert activation(set()).activate(contributions) == ["Gamma"]


def test_reactivation_is_additive_and_keeps_instances() -> None:
    act = activation(profile=Profile(tools=("Alpha",)))
    contributions = [ToolContribution.of(Alpha), ToolContribution.of(Beta)]
    act.activate(contributions)
    first = act.registry.get("Alpha")
    act.profile = Profile(tools=("Alpha", "Beta"))
    assert act.activate(contributions) == ["Beta"]
    assert act.registry.get("Alpha") is first


def test_a_declining_tool_is_absent_with_a_reason() -> None:
    act = activation()
    assert act.activate([ToolContribution.of(Declining), ToolContribution.of(Gamma)]) == ["Gamma"]
    assert any("no search provider" in d.message for d in act.diagnostics)


def test_injection_by_annotation_and_clear_errors() -> None:
    services = Services()
    assert "ExecEnv" not in services.type_names()
    with pytest.raises(ToolLoadError, match=r'needs a ExecEnv for its parameter "env"'):
        build(NeedsEnv, services, label="NeedsEnv")
    from deftly.env import LocalEnv

    services.provide(LocalEnv())
    tool = build(NeedsEnv, services, label="NeedsEnv")
    assert isinstance(tool.env, LocalEnv) and tool.limit == 3


def test_a_missing_dependency_is_a_diagnostic_not_a_crash() -> None:
    act = activation()
    assert act.activate([ToolContribution.of(NeedsEnv), ToolContribution.of(Gamma)]) == ["Gamma"]
    assert any("ExecEnv" in d.message and d.level == "error" for d in act.diagnostics)


def test_tool_paths() -> None:
    contribution = load_tool_path("tests.helpers:SleepTool")
    assert contribution.name == "Sleep" and contribution.factory is SleepTool
    for bad, fragment in [
        ("no_colon", "package.module:ClassName"),
        ("not_a_module_xyz:Tool", "cannot import"),
        ("tests.helpers:Nope", 'has no "Nope"'),
        ("tests.helpers:annotations", "gave a _Feature"),
    ]:
        with pytest.raises(ToolLoadError, match=fragment):
            load_tool_path(bad)


def test_registry_sorting_and_replacement() -> None:
    names = ["Write", "_x", "a", "agent", "Agent", "mcp__a__b", "Read", "select_tools", "web"]
    assert sorted(names, key=tool_sort_key) == [
        "_x",
        "a",
        "agent",
        "Agent",
        "mcp__a__b",
        "Read",
        "select_tools",
        "web",
        "Write",
    ]
    registry = ToolRegistry()
    remove_first = registry.register(Gamma())
    second = Gamma()
    registry.register(second, source="user")
    remove_first()
    entry = registry.get("Gamma")
    assert entry is not None and entry.tool is second and entry.source == "user"


def test_plugins_from_entry_points(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real installed distribution (a dist-info on sys.path) contributing tools."""
    (tmp_path / "plugin_pkg.py").write_text(
        textwrap.dedent(
            """
            from tests.helpers import EchoTool
            from deftly import ToolContribution

            class Shout(EchoTool):
                name = "Shout"

            def tools():
                return [ToolContribution.of(Shout, source="builtin", origin="plugin")]
            """
        )
    )
    dist = tmp_path / "plugin_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[deftly.tools]\nshout = plugin_pkg:tools\nbroken = plugin_pkg:missing_thing\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    async def scenario() -> tuple[list[str], list[Diagnostic]]:
        async with Runtime(workspace, config={}, builtins=False) as rt:
            return [t.name for t in rt.tools()], rt.diagnostics

    import asyncio

    names, diagnostics = asyncio.run(scenario())
    assert "Shout" in names
    assert any("plugin broken" in d.source for d in diagnostics)
    sys.modules.pop("plugin_pkg", None)


async def test_tools_from_config_load_and_runtime_injection(
    make_runtime: Any, workspace: Path
) -> None:
    rt: Runtime = await make_runtime(
        config={"tools": {"load": ["tests.helpers:SleepTool", "bad:path"]}}, builtins=False
    )
    builtin = {c.name for c in builtin_contributions()}
    assert [t.name for t in rt.tools() if t.name not in builtin] == ["Sleep"]
    entry = rt.registry.get("Sleep")
    assert entry is not None and isinstance(entry.tool, SleepTool)
    assert isinstance(entry.tool.workspace, Workspace) and entry.tool.workspace.root == workspace
    assert any("bad" in d.source for d in rt.diagnostics)


def test_entry_points_are_read_once_and_again_after_an_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read of every distribution serves each group; a package installed later (a new
    dist-info folder on sys.path) is seen at the next look-up, one taken off sys.path goes."""
    import importlib.metadata

    from deftly.registry.entry_points import entry_points

    reads: list[int] = []
    read_all = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda: reads.append(1) or read_all())
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "late" not in entry_points("deftly.tools").names
    assert "late" not in entry_points("deftly.skills").names
    assert len(reads) == 1  # both groups from one read

    dist = tmp_path / "late_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: late-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[deftly.tools]\nlate = late_pkg:tools\n[deftly.skills]\nlate = late_pkg\n"
    )
    assert "late" in entry_points("deftly.tools").names
    assert "late" in entry_points("deftly.skills").names
    assert len(reads) == 2

    monkeypatch.undo()
    assert "late" not in entry_points("deftly.tools").names
