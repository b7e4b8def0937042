"""NotifyUser through the real `deftly run` and `deftly serve` binaries: a line on stderr
in print mode, a `notice` event with --json, a line with the bell and a desktop
notification at the interactive terminal (a fake notify-send first on PATH), and an MCP
log message (logger deftly.notify) for the real SDK client."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import mcp.types as mt
import pexpect
import pytest
from mcp import Client, StdioServerParameters

from deftly.features.notify.desktop import DISPLAY_VARIABLES
from tests.agent.loop.helpers import content_text, tool_messages
from tests.cli import DEFTLY
from tests.cli_run.helpers import deftly_run, json_lines
from tests.conftest import subprocess_env
from tests.notify.fake import fake_notify_send, recorded
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

NOTIFY = {"message": "The tests pass.", "title": "CI"}


def _told(server: ModelServer) -> str:
    [result] = tool_messages(server.requests[1])
    return content_text(result)


def test_print_mode_shows_the_notice_on_stderr(workspace: Path) -> None:
    with ModelServer([calls(Call("NotifyUser", NOTIFY)), say("Done.")]) as server:
        done = deftly_run(server, workspace, "run the tests and tell me")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    lines = done.stderr.splitlines()
    assert "🔔 CI: The tests pass." in lines
    assert "\a" not in done.stderr  # stderr is no terminal here
    assert lines.index("🔔 CI: The tests pass.") < lines.index("✓ NotifyUser: CI: The tests pass.")
    assert "The person was notified: a line on stderr." in _told(server)


def test_json_has_it_as_a_notice_event(workspace: Path) -> None:
    with ModelServer([calls(Call("NotifyUser", NOTIFY)), say("Done.")]) as server:
        done = deftly_run(server, workspace, "--json", "tell me")
    assert done.returncode == 0, done.stderr
    notices = [line for line in json_lines(done.stdout) if line["type"] == "notice"]
    assert [n["text"] for n in notices if n["kind"] == "notify"] == ["CI: The tests pass."]
    [permission] = [n["text"] for n in notices if n["kind"] == "permission"]
    assert "NotifyUser is read-only" in permission and "approved" in permission  # never asked
    assert "a notice event in the --json output" in _told(server)


def _interactive(
    server: ModelServer, workspace: Path, tmp_path: Path, **display: str
) -> pexpect.spawn:
    env = subprocess_env(
        OPENAI_API_KEY="k", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100", LINES="40"
    )
    for name in DISPLAY_VARIABLES:
        env.pop(name, None)
    env.update(display)
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    env.pop("NO_COLOR", None)
    args = ["run", "-w", str(workspace), "--base-url", server.openai_url, "--model", "scripted"]
    child = pexpect.spawn(DEFTLY, args, env=env, encoding="utf-8", dimensions=(40, 100), timeout=30)
    child.expect("›")
    return child


@pytest.mark.parametrize("display", [{"DISPLAY": ":7"}, {}], ids=["display", "no-display"])
def test_the_interactive_terminal_shows_it_rings_and_notifies_the_desktop(
    workspace: Path, tmp_path: Path, display: dict[str, str]
) -> None:
    record = fake_notify_send(tmp_path, sys.executable)
    with ModelServer([calls(Call("NotifyUser", NOTIFY)), say("All done.")]) as server:
        child = _interactive(server, workspace, tmp_path, **display)
        try:
            child.sendline("tell me")
            shown = ""
            for marker in ("NotifyUser", "🔔", "CI: The tests pass.", "All done.", "›"):
                child.expect(marker)
                shown += child.before + child.after
            for _ in range(500 if display else 0):  # until the fake has run (it writes first)
                if recorded(record):
                    break
                time.sleep(0.02)
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            if child.isalive():
                child.terminate(force=True)
    assert "\a" in shown
    told = _told(server)
    assert "a line in the terminal; the terminal bell" in told
    if display:
        [run] = recorded(record)
        assert run["argv"] == [
            "--urgency=normal",
            "--app-name=deftly",
            "--",
            "CI",
            "The tests pass.",
        ]
        assert "a desktop notification (notify-send)" in told
        assert not Path(f"/proc/{run['pid']}").exists()
    else:
        assert recorded(record) == []
        assert "desktop" not in told


async def test_serve_sends_an_mcp_log_message(workspace: Path) -> None:
    logged: list[mt.LoggingMessageNotificationParams] = []
    arrived = asyncio.Event()

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        if params.logger == "deftly.notify":
            logged.append(params)
            arrived.set()

    params = StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(workspace)], env=subprocess_env()
    )
    async with Client(params, mode="legacy", logging_callback=on_log) as client:
        listed = await client.list_tools()
        [tool] = [t for t in listed.tools if t.name == "NotifyUser"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        result = await client.call_tool("NotifyUser", {**NOTIFY, "urgency": "high"})
        assert not result.is_error
        await asyncio.wait_for(arrived.wait(), 30)
    [message] = logged
    assert (message.level, message.logger, message.data) == (
        "warning",
        "deftly.notify",
        "CI: The tests pass.",
    )
    text = "\n".join(c.text for c in result.content if isinstance(c, mt.TextContent))
    assert "an MCP log message to the client (logger deftly.notify)" in text
