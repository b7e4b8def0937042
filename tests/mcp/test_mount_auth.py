"""A wrong bearer token on an HTTP mount says so: "401 Unauthorized from <url>: check the
Authorization header in mcp.json" instead of the SDK's "Server returned an error response"."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.features.mcp.manager import McpManager
from tests.conftest import subprocess_env
from tests.mcp.conftest import RICH_SERVER, free_port, listening, wait_until

TOKEN = "s3cret"


@pytest.fixture
def guarded() -> Iterator[str]:
    """The rich server over HTTP on 127.0.0.1, behind a bearer check."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, RICH_SERVER, "--http", str(port), "--token", TOKEN],
        env=subprocess_env(),
    )
    try:
        assert wait_until(lambda: listening(port))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=20)


async def mount(workspace: Path, url: str, token: str) -> Runtime:
    entry = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    runtime = Runtime(
        workspace,
        config={"mcp": {"servers": {"web": entry}}},
        builtins=False,
        plugins=False,
        approve_asks=True,
    )
    await runtime.start()
    return runtime


async def test_a_wrong_token_is_named_as_such(workspace: Path, guarded: str) -> None:
    rt = await mount(workspace, guarded, "wrong")
    try:
        (status,) = rt.service(McpManager).statuses()
        assert status.state == "failed"
        error = status.last_error or ""
        assert f"401 Unauthorized from {guarded}: check the Authorization header in mcp.json" in (
            error
        )
        assert "Server returned an error response" not in error
        call = await rt.call("mcp__web__stats", {"text": "x"})
        assert call.is_error  # the tool was never mounted: no such tool
    finally:
        await rt.close()


async def test_the_right_token_mounts(workspace: Path, guarded: str) -> None:
    rt = await mount(workspace, guarded, TOKEN)
    try:
        assert rt.service(McpManager).statuses()[0].state == "connected"
        assert (await rt.call("mcp__web__stats", {"text": "a b c"})).result.structured == {
            "count": 3,
            "words": ["a", "b", "c"],
        }
    finally:
        await rt.close()
