"""`deftly serve` driven by the official SDK client, over a real stdio pipe and real HTTP.

Every case runs against both transports and both protocol generations the SDK speaks
(`legacy`: the initialize handshake, 2025-11-25; `auto`: 2026-07-28).

The tools are the built-ins (Read, Edit, Grep, Bash...) and the small test tools of
tests/helpers.py, which misbehave on demand (raise, stream, hang, return images).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, alive, eventually, fake, wait_until

TRANSPORTS = ["stdio", "http"]
MODES = ["legacy", "auto"]

# (tool, arguments, is_error, text the result must contain)
SERVE_CASES: list[tuple[str, dict[str, Any], bool, str]] = [
    ("Echo", {"text": "hi", "times": 2}, False, "hihi"),
    ("Sleep", {"path": "notes.txt", "seconds": 0.01}, False, "slept on notes.txt"),
    ("Broken", {"how": "raise"}, True, 'Tool "Broken" failed: ValueError: tool blew up'),
    ("Echo", {"txt": "hi"}, True, "'text' is required"),
    ("Sleep", {"path": "../outside.txt"}, True, "is outside the workspace"),
    ("Sleep", {"path": ".env"}, True, "secret"),
    ("Nope", {}, True, 'There is no tool named "Nope"'),
    # the built-in tools, through the same pipeline
    ("Read", {"path": "notes.txt"}, False, "1\thello"),
    ("Read", {"path": "../outside.txt"}, True, "outside the workspace"),
    ("Read", {"path": ".env"}, True, "secret"),
    ("Grep", {"pattern": "hel+o", "output_mode": "content"}, False, "notes.txt:1:hello"),
    ("Edit", {"path": "notes.txt", "old_string": "hello", "new_string": "hey"}, False, "Edited"),
    ("Read", {"path": "notes.txt"}, False, "1\they"),
    ("Edit", {"path": "notes.txt", "old_string": "absent", "new_string": "x"}, True, "not found"),
    ("Bash", {"command": "echo from-bash"}, False, "from-bash"),
    ("Bash", {"command": "echo oops; exit 3"}, True, "exit code 3"),
]
STREAMING_CALL: tuple[str, dict[str, Any]] = ("Tick", {"count": 4, "interval": 0.05})
STREAMED_LINES = ["tick 1", "tick 2", "tick 3", "tick 4"]


def LONG_CALL(marker: Path) -> tuple[str, dict[str, Any]]:
    return "Tick", {"count": 2000, "interval": 0.05, "marker": str(marker)}


@asynccontextmanager
async def http_serve(
    workspace: Path | None,
    *args: str,
    permission: str = "auto",
    token: str = "",
    cwd: Path | None = None,
) -> AsyncIterator[tuple[str, subprocess.Popen[str]]]:
    """`deftly serve --transport http --port 0` (with DEFTLY_SERVE_TOKEN=`token`; without
    `-w` when `workspace` is None, started in `cwd`); yields its URL; stops it with SIGTERM."""
    where = ["-w", str(workspace)] if workspace is not None else []
    proc = subprocess.Popen(
        [DEFTLY, "serve", *where, "--mode", permission, "-t", "http", "--port", "0", *args],
        env=subprocess_env(DEFTLY_SERVE_TOKEN=token),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    assert proc.stderr is not None
    url = None
    for line in proc.stderr:
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            url = found.group(1)
            break
    try:
        assert url, "deftly serve did not say where it listens"
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


@asynccontextmanager
async def connect(
    workspace: Path,
    transport: str,
    mode: str,
    *args: str,
    permission: str = "auto",
    **client: Any,
) -> AsyncIterator[Client]:
    """A real `deftly serve` process (permission mode `permission`) and an SDK client
    speaking protocol era `mode` to it."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=DEFTLY,
            args=["serve", "-w", str(workspace), "--mode", permission, *args],
            env=subprocess_env(),
        )
        async with Client(params, mode=mode, **client) as session:
            yield session
    else:
        async with (
            http_serve(workspace, *args, permission=permission) as (url, proc),
            Client(url, mode=mode, **client) as session,
        ):
            yield session
        assert proc.returncode == 0, "deftly serve should stop cleanly on SIGTERM"


def text_of(result: mt.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mt.TextContent))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_list_and_call(serve_workspace: Path, transport: str, mode: str) -> None:
    async with connect(serve_workspace, transport, mode) as client:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.protocol_version == expected
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"Echo", "Sleep", "Tick", "Picture", "Broken"} <= set(listed)
        assert "select_tools" not in listed
        echo = listed["Echo"]
        assert echo.description == "Echo the text back."
        assert echo.input_schema["properties"]["text"]["type"] == "string"
        assert echo.input_schema["additionalProperties"] is False
        assert echo.annotations is not None
        assert echo.annotations.read_only_hint is True and echo.annotations.idempotent_hint
        assert listed["Sleep"].annotations is not None
        assert listed["Sleep"].annotations.read_only_hint is False

        for tool, arguments, is_error, fragment in SERVE_CASES:
            result = await client.call_tool(tool, arguments)
            assert result.is_error is is_error, (tool, arguments, text_of(result))
            assert fragment in text_of(result), (tool, arguments, text_of(result))

        picture = await client.call_tool("Picture", {"caption": "look"})
        assert [c.type for c in picture.content] == ["text", "image"]
        image = picture.content[1]
        assert isinstance(image, mt.ImageContent) and image.mime_type == "image/png"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_progress_and_cancellation(
    serve_workspace: Path, tmp_path: Path, transport: str, mode: str
) -> None:
    async with connect(serve_workspace, transport, mode) as client:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        tool, arguments = STREAMING_CALL
        result = await client.call_tool(tool, arguments, progress_callback=on_progress)
        assert not result.is_error
        assert [m for _, _, m in seen] == STREAMED_LINES
        values = [p for p, _, _ in seen]
        assert values == sorted(values) and len(set(values)) == len(values)

        marker = tmp_path / "marker"
        tool, arguments = LONG_CALL(marker)
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool(tool, arguments)
        assert scope.cancelled_caught
        assert await eventually(marker.exists, timeout=30), "the tool never saw the cancellation"
        assert marker.read_text() == "cancelled"

        after = await client.call_tool("Echo", {"text": "still serving"})
        assert text_of(after) == "still serving"


@pytest.mark.parametrize("mode", MODES)
async def test_bash_streams_progress_and_stops_when_the_client_cancels(
    serve_workspace: Path, tmp_path: Path, mode: str
) -> None:
    async with connect(serve_workspace, "stdio", mode) as client:
        seen: list[str] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(message or "")

        streamed = await client.call_tool(
            "Bash",
            {"command": "for i in 1 2 3; do echo line $i; sleep 0.3; done"},
            progress_callback=on_progress,
        )
        assert not streamed.is_error and "line 3" in text_of(streamed)
        assert "line 1" in "".join(seen) and "line 3" in "".join(seen)

        marker = tmp_path / "bash-marker"
        script = f"trap 'echo stopped > {marker}; exit 143' TERM; sleep 120 & wait"
        with anyio.move_on_after(1.5) as scope:
            await client.call_tool("Bash", {"command": script, "timeout": 60})
        assert scope.cancelled_caught
        assert await eventually(marker.exists, timeout=30), "the command never got SIGTERM"
        assert marker.read_text().strip() == "stopped"


@pytest.mark.parametrize("stop", ["close stdin", "SIGTERM"])
def test_serve_stops_cleanly_with_what_it_started(
    serve_workspace: Path, tmp_path: Path, stop: str
) -> None:
    pid_file = tmp_path / "fake.pid"
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"fake": fake("--pid-file", str(pid_file))}}))
    proc = subprocess.Popen(
        [DEFTLY, "serve", "-w", str(serve_workspace), "--mcp-config", str(servers)],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(pid_file.exists, timeout=30)
        fake_pid = int(pid_file.read_text())
        assert alive(fake_pid)
        time.sleep(0.5)
        assert proc.stdin is not None
        if stop == "close stdin":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert wait_until(lambda: not alive(fake_pid))
        assert proc.stderr is not None
        banner = proc.stderr.read().decode()
        assert "tools for" in banner and "on stdio" in banner
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


async def test_serve_also_serves_mounted_mcp_tools(serve_workspace: Path, tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"inner": fake()}}))
    async with connect(serve_workspace, "stdio", "auto", "--mcp-config", str(servers)) as client:
        # mounted servers connect in the background: their tools join the list shortly
        listed: dict[str, mt.Tool] = {}
        deadline = time.monotonic() + 30
        while "mcp__inner__echo" not in listed and time.monotonic() < deadline:
            listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "mcp__inner__echo" in listed
        hints = listed["mcp__inner__echo"].annotations
        assert hints is not None and hints.read_only_hint is True  # passed on as declared
        result = await client.call_tool("mcp__inner__echo", {"text": "nested"})
        assert text_of(result) == "nested"


# -- asking the client's user (the real permission engine, in manual mode) ---------------


def answering(*decisions: str, note: str | None = None, seen: list[str] | None = None) -> Any:
    """An elicitation callback that gives these answers in turn (the last one repeats)."""
    answers = list(decisions)

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        if seen is not None:
            seen.append(params.message)
        decision = answers.pop(0) if len(answers) > 1 else answers[0]
        content: dict[str, Any] = {"decision": decision}
        if note:
            content["feedback"] = note
        return mt.ElicitResult(action="accept", content=content)

    return elicit


WRITE = {"path": "notes.txt", "write": True, "seconds": 0.01}


@pytest.mark.parametrize("mode", MODES)
async def test_approval_is_asked_through_elicitation(serve_workspace: Path, mode: str) -> None:
    questions: list[str] = []
    async with connect(
        serve_workspace,
        "stdio",
        mode,
        permission="manual",
        elicitation_callback=answering("approve", seen=questions),
    ) as client:
        result = await client.call_tool("Sleep", WRITE)
        assert (result.is_error, text_of(result)) == (False, "slept on notes.txt")
        echoed = await client.call_tool("Echo", {"text": "read-only"})
        assert text_of(echoed) == "read-only"
    [question] = questions  # the read-only Echo was approved without asking
    assert "Sleep" in question and str(serve_workspace / "notes.txt") in question


@pytest.mark.parametrize("mode", MODES)
async def test_rejection_and_session_approval_reach_the_engine(
    serve_workspace: Path, mode: str
) -> None:
    questions: list[str] = []
    async with connect(
        serve_workspace,
        "stdio",
        mode,
        permission="manual",
        elicitation_callback=answering(
            "reject", "approve_session", note="use b.txt", seen=questions
        ),
    ) as client:
        rejected = await client.call_tool("Sleep", WRITE)
        assert rejected.is_error
        assert 'The user declined to run "Sleep"' in text_of(rejected)
        assert "use b.txt" in text_of(rejected)
        assert not (await client.call_tool("Sleep", WRITE)).is_error
        again = await client.call_tool("Sleep", WRITE)  # remembered for the session
        assert not again.is_error
    assert len(questions) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_without_elicitation_the_refusal_says_how_to_allow(
    serve_workspace: Path, mode: str
) -> None:
    async with connect(serve_workspace, "stdio", mode, permission="manual") as client:
        result = await client.call_tool("Sleep", WRITE)
    text = text_of(result)
    assert result.is_error
    assert "does not support elicitation" in text
    assert "declined" not in text  # nobody was asked, so nobody declined
    assert "--mode auto" in text
    assert f'"Sleep({serve_workspace / "notes.txt"})"' in text
    assert "[permissions] allow" in text


async def test_approval_over_http(serve_workspace: Path) -> None:
    for mode in MODES:
        async with connect(
            serve_workspace,
            "http",
            mode,
            permission="manual",
            elicitation_callback=answering("approve"),
        ) as client:
            result = await client.call_tool("Sleep", WRITE)
            assert text_of(result) == "slept on notes.txt"
