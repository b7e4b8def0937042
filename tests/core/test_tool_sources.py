"""Tools loaded from outside deftly (`[tools] load` or a package's entry point) say so: their
source is "plugin", in `rt.tools()`, `deftly tools` and `deftly tools --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deftly import Runtime
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))

TOOL = """
from pydantic import BaseModel, ConfigDict
from deftly import Accesses, Tool, ToolExecution, ToolResult


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Loaded(Tool[NoParams]):
    name = "LoadedTool"
    description = "A tool loaded by path."
    params = NoParams

    def resolve(self, args: NoParams) -> ToolExecution:
        return ToolExecution(accesses=Accesses.none(), execute=lambda ctx: ToolResult.ok("x"))


class Plugged(Loaded):
    name = "PluggedTool"
    description = "A tool from an entry point."
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real importable module plus a dist-info that declares it as a `deftly.tools`
    entry point (what `pip install` of a plugin leaves behind)."""
    root = tmp_path / "pkgs"
    root.mkdir()
    (root / "source_tools.py").write_text(TOOL)
    info = root / "source_tools-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: source-tools\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[deftly.tools]\nplugged = source_tools:Plugged\n")
    monkeypatch.syspath_prepend(str(root))
    yield root
    sys.modules.pop("source_tools", None)


def _sources(rt: Runtime) -> dict[str, str]:
    return {info.name: info.source for info in rt.tools()}


async def test_library_shows_loaded_and_entry_point_tools_as_plugins(
    package: Path, workspace: Path
) -> None:
    config = {"tools": {"load": ["source_tools:Loaded"]}}
    async with Runtime(workspace, config=config, plugins=True) as rt:
        sources = _sources(rt)
    assert sources["LoadedTool"] == "plugin"
    assert sources["PluggedTool"] == "plugin"
    assert sources["Read"] == "builtin"


def test_deftly_tools_shows_plugin_in_the_table_and_json(package: Path, workspace: Path) -> None:
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[tools]\nload = ["source_tools:Loaded"]\n')
    env = subprocess_env(COLUMNS="200")
    env["PYTHONPATH"] = str(package) + os.pathsep + env["PYTHONPATH"]

    def run(*extra: str) -> str:
        done = subprocess.run(
            [DEFTLY, "tools", "-w", str(workspace), *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = {item["name"]: item["source"] for item in json.loads(run("--json"))}
    assert listed["LoadedTool"] == "plugin" and listed["PluggedTool"] == "plugin"
    assert listed["Read"] == "builtin"
    rows = {line.split("\t")[0]: line.split("\t") for line in run().splitlines()}  # piped
    assert rows["LoadedTool"][1] == "plugin" and rows["PluggedTool"][1] == "plugin"
