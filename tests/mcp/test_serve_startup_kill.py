"""`deftly serve` stopped by a signal while it is still starting stops the MCP servers it
had started (a real serve process, a real slow fake server, real signals)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deftly.features.mcp.manager import McpManager
from tests.conftest import subprocess_env
from tests.mcp.conftest import alive, fake, wait_until

DEFTLY = str(Path(sys.executable).with_name("deftly"))


# SIGKILL leaves serve no time to close anything: the kernel kills the mounted server
# (the parent-death signal its lifeline set before becoming it), even one that ignores its
# closed stdin and sits in a session of its own.
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
def test_serve_killed_during_start_up_stops_the_servers_it_started(
    workspace: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    pid_file = tmp_path / "slow.pid"
    servers = tmp_path / "servers.json"
    # A server that starts and then never answers (serve connects it in the background).
    slow = fake("--pid-file", str(pid_file), "--hang-on-start", startup_timeout=60)
    servers.write_text(json.dumps({"mcpServers": {"slow": slow}}))
    proc = subprocess.Popen(
        [DEFTLY, "serve", "-w", str(workspace), "--mcp-config", str(servers)],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(pid_file.exists, timeout=30)
        assert wait_until(lambda: pid_file.read_text().strip().isdigit(), timeout=10)
        fake_pid = int(pid_file.read_text())
        assert alive(fake_pid)
        proc.send_signal(stop)
        proc.wait(timeout=30)
        assert wait_until(lambda: not alive(fake_pid), timeout=15), "the MCP server was orphaned"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if pid_file.exists() and pid_file.read_text().strip().isdigit():
            pid = int(pid_file.read_text())
            if alive(pid):
                import os

                os.kill(pid, signal.SIGKILL)


async def test_a_runtime_whose_start_is_cancelled_stops_its_mcp_servers(
    workspace: Path, tmp_path: Path
) -> None:
    # The library side of the same promise: `async with Runtime(...)` never reaches its
    # exit when the start is cut short, so the start itself closes what it had started:
    # the slow server still starting, and the quick one already connected.
    import asyncio

    from deftly import Runtime
    from tests.mcp.conftest import eventually

    slow_pid, quick_pid = tmp_path / "slow.pid", tmp_path / "quick.pid"
    servers = tmp_path / "servers.json"
    slow = fake("--pid-file", str(slow_pid), "--hang-on-start", startup_timeout=60)
    quick = fake("--pid-file", str(quick_pid))
    servers.write_text(json.dumps({"mcpServers": {"quick": quick, "slow": slow}}))
    rt = Runtime(workspace, plugins=False)
    rt.add_mcp_config(servers)
    starting = asyncio.ensure_future(rt.start())

    def started(path: Path) -> bool:
        return path.exists() and path.read_text().isdigit()

    try:
        assert await eventually(lambda: started(slow_pid) and started(quick_pid))
        assert await eventually(lambda: rt.service(McpManager).statuses()[0].state == "connected")
        pids = [int(slow_pid.read_text()), int(quick_pid.read_text())]
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        # Gone now, with the event loop still running (not by its shutdown).
        assert await eventually(lambda: not any(alive(pid) for pid in pids), timeout=15)
    finally:
        await rt.close()
