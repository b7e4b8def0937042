"""One-shot `deftly call`: no background tasks it could never follow.

The process exits when its one call ends, so a foreground timeout stops the command and
says so, `run_in_background` is refused with what to use instead, and Bash's description
leaves background tasks out. The same capability, for the library: `without_background()`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from tests.cli import run_deftly
from tests.shell.conftest import marked_sleep, new_marker, processes_with


def deftly(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_deftly(*args, cwd=cwd, timeout=60)


def test_a_foreground_timeout_in_deftly_call_stops_the_command_and_says_so(
    workspace: Path,
) -> None:
    marker = new_marker()
    arguments = json.dumps({"command": f"echo started; {marked_sleep(marker)}", "timeout": 1})
    result = deftly("call", "Bash", arguments, "--yes", "--json", cwd=workspace)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["is_error"] is True
    output = data["output"]
    assert "started" in output
    assert "killed at its timeout of 1s" in output
    assert "moved to the background" not in output and "run_in_background" not in output
    assert processes_with(marker) == []


def test_run_in_background_is_refused_in_deftly_call_with_what_to_use_instead(
    workspace: Path,
) -> None:
    marker = new_marker()
    arguments = json.dumps({"command": marked_sleep(marker), "run_in_background": True})
    result = deftly("call", "Bash", arguments, "--yes", "--json", cwd=workspace)
    assert result.returncode == 1, result.stderr
    output = json.loads(result.stdout)["output"]
    assert "one-shot call" in output
    for instead in ("deftly batch", "WaitFor", "deftly serve", "deftly.Runtime"):
        assert instead in output
    assert processes_with(marker) == []


@pytest.mark.local_env  # the deftly command runs the local env
def test_deftly_batch_still_runs_background_tasks(workspace: Path) -> None:
    lines = [
        {"id": "a", "name": "Bash", "arguments": {"command": "echo hi", "run_in_background": True}},
        {"id": "b", "name": "TaskList", "arguments": {}},
    ]
    batch = workspace.parent / "batch.jsonl"
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = deftly("batch", str(batch), "--yes", "--json", cwd=workspace)
    first = json.loads(result.stdout.splitlines()[0])
    assert first["is_error"] is False and "Started background task" in first["output"]


async def test_the_library_without_background_describes_and_refuses_the_same(
    workspace: Path,
) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True).without_background() as rt:
        [bash] = [t for t in rt.tools() if t.name == "Bash"]
        assert "run_in_background" not in bash.description
        assert "background task" not in bash.description
        assert "must finish within its timeout" in bash.description
        refused = await rt.call("Bash", {"command": "echo x", "run_in_background": True})
        assert refused.is_error and "deftly batch" in refused.text
        done = await rt.call("Bash", {"command": "echo fine"})
        assert not done.is_error and done.text.startswith("fine")


async def test_a_normal_runtime_still_offers_background(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime()
    [bash] = [t for t in rt.tools() if t.name == "Bash"]
    assert "run_in_background: true" in bash.description
