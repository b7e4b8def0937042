"""`deftly mcp list`, `deftly tools` and `deftly call` with mounted servers, as processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import subprocess_env, trust_folder
from tests.mcp.conftest import DEFTLY, fake


def deftly(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, *args],
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200"),
        timeout=120,
        check=False,
    )


def configure(workspace: Path) -> None:
    """A user file with a working and a broken server, and a project file adding one more."""
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "mcp.json"
    user.parent.mkdir(parents=True)
    user.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fake": fake("--long-names"),
                    "broken": fake("--exit-on-start"),
                }
            }
        )
    )
    project = workspace / ".deftly" / "mcp.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"mcpServers": {"off": fake(enabled=False)}}))
    trust_folder(workspace)  # a project's mcp.json counts once the folder is trusted


def test_mcp_list_shows_states_tools_and_errors(workspace: Path) -> None:
    configure(workspace)
    result = deftly("mcp", "list", "-w", str(workspace), "--json")
    assert result.returncode == 0, result.stderr
    by_name = {s["name"]: s for s in json.loads(result.stdout)}
    assert by_name["fake"]["state"] == "connected"
    assert {"name": "mcp__fake__echo", "remote_name": "echo"} in by_name["fake"]["tools"]
    assert by_name["fake"]["collisions"][0]["kind"] == "same_server"
    assert by_name["broken"]["state"] == "failed"
    assert "refusing to start" in by_name["broken"]["last_error"]
    assert by_name["off"]["state"] == "disabled"

    text = deftly("mcp", "list", "-w", str(workspace))
    assert text.returncode == 0, text.stderr
    assert "connected" in text.stdout and "mcp__fake__echo" in text.stdout
    assert "last error:" in text.stdout and "refusing to start" in text.stdout
    assert "left out:" in text.stdout


def test_mcp_list_without_servers_says_how_to_add_one(workspace: Path) -> None:
    result = deftly("mcp", "list", "-w", str(workspace))
    assert result.returncode == 0
    assert "mcpServers" in result.stdout


def test_tools_and_call_see_mounted_tools(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"mcpServers": {"more": fake()}}))
    listed = deftly("tools", "-w", str(workspace), "--json", "--mcp-config", str(extra))
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)}
    assert tools["mcp__more__echo"]["source"] == "mcp"
    assert tools["mcp__more__echo"]["disclosure"] == "inline"

    called = deftly(
        "call",
        "mcp__more__echo",
        '{"text": "from the cli"}',
        "-w",
        str(workspace),
        "--mcp-config",
        str(extra),
        "--json",
        "--yes",
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["output"] == "from the cli"


def test_serve_help_shows_its_options() -> None:
    result = deftly("serve", "--help")
    assert result.returncode == 0
    for option in ("--workspace", "--mode", "--transport", "--host", "--port", "--mcp-config"):
        assert option in result.stdout
