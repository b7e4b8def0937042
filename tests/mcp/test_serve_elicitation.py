"""A mounted server's elicitation reaches the user of `deftly serve`'s client as the server's
own form: its message and schema unchanged, one elicitation, and the typed answers back to
the mounted server (a real SDK server mounted, `deftly serve` over a real stdio pipe, the
real SDK client answering)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import mcp.types as mt
from mcp import Client, StdioServerParameters

from deftly.serve.questions import as_text
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, rich
from tests.mcp.test_serve import text_of


async def _listed(client: Client, name: str) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # mounted servers connect in the background
        if name in {t.name for t in (await client.list_tools()).tools}:
            return True
    return False


async def test_a_mounted_form_is_passed_on_and_answered_typed(
    workspace: Path, tmp_path: Path
) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"rich": rich()}}))
    asked: list[mt.ElicitRequestFormParams] = []

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        asked.append(params)
        if "name" in params.requested_schema.get("properties", {}):
            return mt.ElicitResult(action="accept", content={"name": "Ada"})
        return mt.ElicitResult(
            action="accept", content={"colour": "green", "tabs": True, "width": 88}
        )

    params = StdioServerParameters(
        command=DEFTLY,
        args=["serve", "-w", str(workspace), "--mode", "auto", "--mcp-config", str(servers)],
        env=subprocess_env(),
    )
    async with Client(params, mode="legacy", elicitation_callback=elicit) as client:
        assert await _listed(client, "mcp__rich__ask_prefs")
        named = await client.call_tool("mcp__rich__ask_name", {})
        assert not named.is_error, text_of(named)
        assert "hello Ada" in text_of(named)
        [form] = asked
        assert form.message == "What is your name?"  # the server's words, not deftly's
        assert set(form.requested_schema["properties"]) == {"name"}

        prefs = await client.call_tool("mcp__rich__ask_prefs", {})
        assert not prefs.is_error, text_of(prefs)
        assert "colour='green' tabs=True width=88" in text_of(prefs)
        assert len(asked) == 2  # one elicitation per form
        assert asked[1].requested_schema["properties"]["tabs"]["type"] == "boolean"


def test_typed_values_become_answer_strings() -> None:
    assert as_text(True) == "true" and as_text(False) == "false"
    assert as_text(88) == "88" and as_text(2.5) == "2.5"
    assert as_text(["a", "b"]) == "a, b"
    assert as_text("") is None and as_text(None) is None and as_text([]) is None
