"""Mounting real MCP servers (written with the SDK, run as real processes) as tools.

The runtime must survive every misbehaving server and report each one within its timeout.
Time limits asserted here are loose on purpose (a loaded 2-core machine): what matters is
that nothing hangs past its configured timeout by more than a generous margin.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deftly import CancelToken, ImagePart, Outcome, Runtime, TextPart
from deftly.execution.events import Event, RuntimeNotice, ToolProgress
from deftly.features.mcp.manager import McpManager
from deftly.features.mcp.naming import qualify
from deftly.features.mcp.tool import McpTool
from tests.conftest import subprocess_env
from tests.mcp.conftest import (
    FAKE_SERVER,
    alive,
    eventually,
    fake,
    free_port,
    listening,
    wait_until,
)

MARGIN = 20.0  # seconds of slack on top of any configured timeout


async def mount(workspace: Path, servers: dict[str, Any], **mcp: Any) -> Runtime:
    runtime = Runtime(
        workspace,
        config={"mcp": {"servers": servers, **mcp}},
        builtins=False,
        plugins=False,
        approve_asks=True,  # these tests are about mounting, not permissions
    )
    await runtime.start()
    return runtime


async def test_mounted_tools_run_through_the_whole_pipeline(
    workspace: Path, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.txt"
    rt = await mount(workspace, {"fake": fake("--calls-file", str(calls))})
    try:
        infos = {i.name: i for i in rt.tools()}
        assert infos["mcp__fake__echo"].source == "mcp"
        assert infos["mcp__fake__echo"].parameters["required"] == ["text"]
        assert rt.service(McpManager).statuses()[0].state == "connected"

        echo = await rt.call("mcp__fake__echo", {"text": "hi"})
        assert (echo.is_error, echo.text) == (False, "hi")

        added = await rt.call("mcp__fake__add", {"a": 2, "b": 3})
        assert '"sum": 5' in added.text

        picture = await rt.call("mcp__fake__image", {})
        assert isinstance(picture.result.output, list)
        assert [type(p) for p in picture.result.output] == [TextPart, ImagePart]

        failed = await rt.call("mcp__fake__fail", {})
        assert failed.is_error and "failed on purpose" in failed.text

        # Checked against the server's schema before anything is sent.
        wrong = await rt.call("mcp__fake__echo", {"txt": "hi"})
        assert wrong.outcome is Outcome.PREFLIGHT_REJECTED
        assert "'text' is required" in wrong.text
        assert calls.read_text().split() == ["echo", "add", "image", "fail"]

        big = await rt.call("mcp__fake__big", {})
        assert big.truncated and "output_path:" in big.text and len(big.text) < 10_000
    finally:
        await rt.close()


async def test_a_mounted_tool_runs_alone_and_its_rule_is_its_name(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake()})
    try:
        entry = rt.registry.get("mcp__fake__echo")
        assert entry is not None and isinstance(entry.tool, McpTool)
        execution = entry.tool.resolve({"text": "x"})
        assert execution.accesses is None
        assert execution.approval_rule == "mcp__fake__echo"
        assert not entry.tool.traits.read_only  # hints are not trusted by default
    finally:
        await rt.close()


async def test_read_only_hints_count_only_when_trusted(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake()}, trust_read_only_hints=True)
    try:
        echo = rt.registry.get("mcp__fake__echo")
        add = rt.registry.get("mcp__fake__add")
        assert echo is not None and echo.tool.traits.read_only
        assert add is not None and not add.tool.traits.read_only
    finally:
        await rt.close()


async def test_progress_from_a_mounted_tool_becomes_progress_events(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake()})
    events: list[Event] = []
    rt.subscribe(events.append)
    try:
        result = await rt.call("mcp__fake__progress", {}, call_id="p1")
        assert result.text == "progressed"
        progress = [e.update for e in events if isinstance(e, ToolProgress) and e.call_id == "p1"]
        assert [(u.progress, u.total, u.text) for u in progress] == [
            (1, 3, "step 1"),
            (2, 3, "step 2"),
            (3, 3, "step 3"),
        ]
    finally:
        await rt.close()


async def test_a_server_that_dies_mid_call_fails_at_once_and_restarts(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake()}, call_timeout=120)
    try:
        first_pid = int((await rt.call("mcp__fake__pid", {})).text)
        started = time.monotonic()
        crashed = await rt.call("mcp__fake__crash", {})
        assert time.monotonic() - started < MARGIN  # not the 120 s call timeout
        assert crashed.is_error
        assert 'MCP server "fake" stopped while running "crash"' in crashed.text
        assert "crashing on purpose" in crashed.text  # its stderr, for the user
        assert "restarted on the next call" in crashed.text
        [status] = rt.service(McpManager).statuses()
        assert status.state == "failed" and "crashing on purpose" in (status.last_error or "")

        again = await rt.call("mcp__fake__pid", {})
        assert not again.is_error and int(again.text) != first_pid
        [status] = rt.service(McpManager).statuses()
        assert status.state == "connected" and status.restarts == 1
        assert await eventually(lambda: not alive(first_pid))
    finally:
        await rt.close()


async def test_a_server_that_died_while_idle_is_restarted_before_the_next_call(
    workspace: Path,
) -> None:
    rt = await mount(workspace, {"fake": fake()})
    try:
        pid = int((await rt.call("mcp__fake__pid", {})).text)
        subprocess.run(["kill", "-9", str(pid)], check=True)
        connection = rt.service(McpManager).connection("fake")
        assert connection is not None
        for _ in range(200):  # the end of its output is noticed without any call
            if connection.state == "failed":
                break
            await asyncio.sleep(0.05)
        assert connection.state == "failed"
        result = await rt.call("mcp__fake__echo", {"text": "back"})
        assert (result.is_error, result.text) == (False, "back")
    finally:
        await rt.close()


async def test_servers_that_hang_or_exit_on_start_do_not_stop_the_others(
    workspace: Path,
) -> None:
    servers = {
        "hangs": fake("--hang-on-start", startup_timeout=2),
        "exits": fake("--exit-on-start"),
        "missing": {"command": str(workspace / "no-such-program")},
        "good": fake(),
    }
    started = time.monotonic()
    rt = await mount(workspace, servers)
    try:
        assert time.monotonic() - started < 2 + MARGIN
        states = {s.name: s for s in rt.service(McpManager).statuses()}
        assert states["good"].state == "connected"
        assert states["hangs"].state == "failed"
        assert "did not start within 2 s" in (states["hangs"].last_error or "")
        assert states["exits"].state == "failed"
        assert "refusing to start" in (states["exits"].last_error or "")
        assert states["missing"].state == "failed"
        assert "no-such-program" in (states["missing"].last_error or "")
        assert {d.source for d in rt.diagnostics} >= {
            'MCP server "hangs"',
            'MCP server "exits"',
            'MCP server "missing"',
        }
        ok = await rt.call("mcp__good__echo", {"text": "fine"})
        assert ok.text == "fine"
        gone = await rt.call("mcp__hangs__echo", {"text": "x"})
        assert gone.is_error and 'MCP server "hangs" is not running' in gone.text
    finally:
        await rt.close()


async def test_a_call_that_hangs_is_abandoned_after_the_call_timeout(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake(call_timeout=2)})
    try:
        started = time.monotonic()
        hung = await rt.call("mcp__fake__hang", {})
        elapsed = time.monotonic() - started
        assert 1.5 < elapsed < 2 + MARGIN
        assert hung.is_error and 'did not answer "hang" within 2 s' in hung.text
        after = await rt.call("mcp__fake__echo", {"text": "still here"})
        assert after.text == "still here"
        assert rt.service(McpManager).statuses()[0].state == "connected"
    finally:
        await rt.close()


async def test_cancelling_a_mounted_call_stops_waiting_for_it(workspace: Path) -> None:
    rt = await mount(workspace, {"fake": fake()}, call_timeout=300)
    try:
        token = CancelToken()
        task = asyncio.create_task(rt.call("mcp__fake__hang", {}, cancel=token))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        token.cancel("test", by_user=True)
        result = await asyncio.wait_for(task, MARGIN)
        assert time.monotonic() - started < MARGIN
        assert result.is_error
        after = await rt.call("mcp__fake__echo", {"text": "ok"})
        assert after.text == "ok"
    finally:
        await rt.close()


async def test_long_and_colliding_names(workspace: Path) -> None:
    rt = Runtime(
        workspace,
        config={
            "mcp": {
                "servers": {
                    "srv a": fake("--long-names"),
                    "srv__a": fake("--long-names"),
                }
            }
        },
        builtins=False,
        plugins=False,
    )
    notices: list[RuntimeNotice] = []
    rt.subscribe(lambda e: notices.append(e) if isinstance(e, RuntimeNotice) else None)
    await rt.start()
    try:
        first, second = rt.service(McpManager).statuses()
        long_name = qualify("srv a", "t" * 80)
        assert len(long_name) == 64
        names = {t.name for t in first.tools}
        assert long_name in names and "mcp__srv_a__a_b" in names
        assert rt.registry.get(long_name) is not None
        [same] = first.collisions
        assert (same.qualified, same.tool, same.kind, same.winner) == (
            "mcp__srv_a__a_b",
            "a__b",
            "same_server",
            "a b",
        )
        assert second.tools == ()
        assert {c.kind for c in second.collisions} == {"other_server"}
        assert {c.winner for c in second.collisions} == {"srv a"}
        assert [n.kind for n in notices].count("mcp.tool_name_collision") == 2
        # The name kept belongs to the first server: calls go there.
        entry = rt.registry.get("mcp__srv_a__echo")
        assert entry is not None and isinstance(entry.tool, McpTool)
        assert entry.tool.server == "srv a"
        assert "a__b" in " ".join(d.message for d in rt.diagnostics)
    finally:
        await rt.close()


async def test_closing_the_runtime_stops_every_server(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    rt = await mount(workspace, {"fake": fake("--pid-file", str(pid_file))})
    pid = int(pid_file.read_text())
    assert alive(pid)
    manager = rt.service(McpManager)
    await rt.close()
    assert await eventually(lambda: not alive(pid))
    assert manager.statuses()[0].state == "closed"


async def test_disabled_servers_are_not_started(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    rt = await mount(workspace, {"off": fake("--pid-file", str(pid_file), enabled=False)})
    try:
        [status] = rt.service(McpManager).statuses()
        assert status.state == "disabled" and status.tools == ()
        assert not pid_file.exists()
        result = await rt.call("mcp__off__echo", {"text": "x"})
        assert result.is_error and "disabled" in result.text
    finally:
        await rt.close()


@pytest.fixture
def http_server(tmp_path: Path) -> Any:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, FAKE_SERVER, "--http", str(port)],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: listening(port)), "the fake HTTP server did not start"
        yield port, proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


async def test_a_streamable_http_server_is_mounted_with_headers(
    workspace: Path, http_server: Any
) -> None:
    port, proc = http_server
    url = f"http://127.0.0.1:{port}/mcp"
    rt = await mount(
        workspace, {"web": {"url": url, "headers": {"X-Test": "1"}, "call_timeout": 5}}
    )
    try:
        [status] = rt.service(McpManager).statuses()
        assert status.state == "connected" and status.transport == "http"
        result = await rt.call("mcp__web__echo", {"text": "over http"})
        assert result.text == "over http"
        proc.kill()
        proc.wait(timeout=10)
        started = time.monotonic()
        down = await rt.call("mcp__web__echo", {"text": "again"})
        assert down.is_error
        assert time.monotonic() - started < 5 + MARGIN
    finally:
        await rt.close()
