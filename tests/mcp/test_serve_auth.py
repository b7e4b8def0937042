"""`deftly serve` over HTTP with a bearer token (DEFTLY_SERVE_TOKEN), and the refusal to
serve a non-loopback address without one. Real server process, real HTTP on 127.0.0.1,
the real SDK client."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import httpx2
import mcp.types as mt
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from deftly.serve.http_auth import is_loopback
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY
from tests.mcp.test_serve import http_serve, text_of

TOKEN = "t0ken-for-this-test"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def test_a_token_is_required_on_every_request(serve_workspace: Path) -> None:
    async with http_serve(serve_workspace, token=TOKEN) as (url, _proc):
        async with httpx.AsyncClient() as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                refused = await http.post(url, json=PING, headers=headers)
                assert refused.status_code == 401, headers
                assert "DEFTLY_SERVE_TOKEN" in refused.json()["message"]
                assert refused.headers["www-authenticate"].startswith("Bearer")

        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers) as authorized,
            Client(streamable_http_client(url, http_client=authorized)) as client,
        ):
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"Read", "Bash"} <= tools
            result = await client.call_tool("Echo", {"text": "through the gate"})
            assert isinstance(result, mt.CallToolResult) and not result.is_error
            assert text_of(result) == "through the gate"


def test_a_public_address_without_a_token_is_refused(serve_workspace: Path) -> None:
    done = subprocess.run(
        [DEFTLY, "serve", "-w", str(serve_workspace), "-t", "http", "--host", "0.0.0.0"],
        check=False,
        env=subprocess_env(DEFTLY_SERVE_TOKEN=""),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "DEFTLY_SERVE_TOKEN" in done.stderr and "127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
