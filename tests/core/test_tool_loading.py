"""A tool that cannot describe itself (its `.md` file is missing) is a diagnostic naming
the file, not an internal error on every listing."""

from __future__ import annotations

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
from deftly import Tool, ToolExecution, ToolResult, describe, Accesses


class NoDocParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoDoc(Tool[NoDocParams]):
    name = "NoDoc"
    description = describe("no_doc.md")  # never written
    params = NoDocParams

    def resolve(self, args: NoDocParams) -> ToolExecution:
        return ToolExecution(accesses=Accesses.none(), execute=lambda ctx: ToolResult.ok("x"))
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "pkgs"
    (root / "nodoc_tools").mkdir(parents=True)
    (root / "nodoc_tools" / "__init__.py").write_text("")
    (root / "nodoc_tools" / "tool.py").write_text(TOOL)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m.startswith("nodoc_tools")]:
        del sys.modules[name]


async def test_a_missing_description_file_is_a_diagnostic(package: Path, workspace: Path) -> None:
    config = {"tools": {"load": ["nodoc_tools.tool:NoDoc"]}}
    async with Runtime(workspace, config=config, plugins=False) as rt:
        names = [tool.name for tool in rt.tools()]
        errors = [d for d in rt.diagnostics if d.level == "error"]
    assert "NoDoc" not in names and "Read" in names
    [error] = errors
    assert "no_doc.md" in error.message and "description" in error.message


def test_deftly_tools_reports_it_once_and_lists_the_rest(package: Path, workspace: Path) -> None:
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[tools]\nload = ["nodoc_tools.tool:NoDoc"]\n')
    env = subprocess_env(COLUMNS="200")
    env["PYTHONPATH"] = str(package) + os.pathsep + env["PYTHONPATH"]
    done = subprocess.run(
        [DEFTLY, "tools", "-w", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "internal error" not in done.stderr
    assert done.stderr.count("cannot be read from") == 1 and "no_doc.md" in done.stderr
    assert "Read" in done.stdout and "NoDoc" not in done.stdout
