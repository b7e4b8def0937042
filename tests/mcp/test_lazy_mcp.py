"""`deftly call` starts only the MCP server whose tool it calls (none for a built-in tool),
so one live and two dead servers cost a built-in call nothing and print no warnings;
`deftly tools` still starts them all and names each unreachable server once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.features.mcp.manager import McpManager
from deftly.features.mcp.naming import qualify
from deftly.features.mcp.selection import may_own
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, fake


@pytest.fixture
def servers(tmp_path: Path) -> tuple[Path, Path]:
    """An mcp.json with one live server (writing its pid file when it starts) and two dead
    ones: one exits at once, one is a command that does not exist."""
    pid_file = tmp_path / "live.pid"
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "live": fake("--pid-file", str(pid_file)),
                    "dead1": fake("--exit-on-start"),
                    "dead2": {"command": str(tmp_path / "no-such-server")},
                }
            }
        )
    )
    return config, pid_file


def _deftly(workspace: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, *argv],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )


def test_a_builtin_call_starts_no_server(workspace: Path, servers: tuple[Path, Path]) -> None:
    config, pid_file = servers
    (workspace / "a.txt").write_text("hello\n")
    done = _deftly(workspace, "call", "--mcp-config", str(config), "Read", '{"path":"a.txt"}')
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout
    assert not pid_file.exists()  # the live server never started
    assert "dead1" not in done.stderr and "dead2" not in done.stderr
    assert "warning" not in done.stderr


def test_an_mcp_call_starts_only_its_server(workspace: Path, servers: tuple[Path, Path]) -> None:
    config, pid_file = servers
    done = _deftly(
        workspace,
        "call",
        "--yes",
        "--mcp-config",
        str(config),
        "mcp__live__echo",
        '{"text":"hi there"}',
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hi there" in done.stdout
    assert pid_file.exists()
    assert "dead1" not in done.stderr and "dead2" not in done.stderr


def test_a_call_to_a_dead_server_says_so(workspace: Path, servers: tuple[Path, Path]) -> None:
    config, pid_file = servers
    done = _deftly(
        workspace, "call", "--mcp-config", str(config), "mcp__dead1__echo", '{"text":"x"}'
    )
    assert done.returncode != 0
    assert 'MCP server "dead1"' in done.stdout + done.stderr
    assert not pid_file.exists() and "dead2" not in done.stderr


def test_deftly_tools_names_each_unreachable_server_once(
    workspace: Path, servers: tuple[Path, Path]
) -> None:
    config, pid_file = servers
    done = _deftly(workspace, "tools", "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    assert "mcp__live__echo" in done.stdout and pid_file.exists()
    assert done.stderr.count('"dead1"') == 1 and done.stderr.count('"dead2"') == 1
    assert '"live"' not in done.stderr


async def test_the_library_option_narrows_the_servers(
    workspace: Path, servers: tuple[Path, Path]
) -> None:
    config, pid_file = servers
    runtime = Runtime(workspace, config={"mcp": {"config_files": [str(config)]}}, plugins=False)
    async with runtime.only_mcp_for(["Read", "Grep"]) as rt:
        statuses = rt.service(McpManager).statuses()
        assert statuses == [] or all(s.state != "connected" for s in statuses)
        assert not any(t.source == "mcp" for t in rt.tools())
    assert not pid_file.exists()
    runtime = Runtime(workspace, config={"mcp": {"config_files": [str(config)]}}, plugins=False)
    async with runtime.only_mcp_for(["mcp__live__add"]) as rt:
        assert [s.name for s in rt.service(McpManager).statuses()] == ["live"]
        assert any(t.name == "mcp__live__echo" for t in rt.tools())


def test_a_long_tool_name_still_finds_its_server() -> None:
    server = "a-server-with-a-rather-long-name"
    name = qualify(server, "a_tool_with_an_even_longer_name_than_the_limit_allows")
    assert len(name) == 64
    assert may_own(server, name)
    assert not may_own("other", name)
    assert may_own("live", "mcp__live__echo") and not may_own("live", "mcp__lively__echo")
    assert not may_own("live", "Read") and not may_own("live", "mcp__live__")
