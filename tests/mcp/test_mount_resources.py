"""Re-export: a mounted tool's title, output schema and structured content; the servers'
resources (`mcp://<server>/<quoted uri>`) and prompts (`mcp__<server>__<prompt>`) through
`McpManager`; a resource link in a result can be opened (ReadMcpResource, offered only while
some server has resources); several text blocks stay a line apart. Over stdio and HTTP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly import ImagePart, Runtime
from deftly.contract.errors import DeftlyError
from deftly.features.mcp.manager import McpManager
from deftly.features.mcp.naming import parse_resource_uri, resource_uri
from tests.conftest import subprocess_env
from tests.mcp.conftest import RICH_SERVER, fake, free_port, listening, rich, wait_until

README = resource_uri("rich", "note://readme")


@pytest.fixture
def http_rich() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, RICH_SERVER, "--http", str(port)], env=subprocess_env()
    )
    try:
        assert wait_until(lambda: listening(port))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=20)


async def mount(workspace: Path, servers: dict[str, Any]) -> Runtime:
    runtime = Runtime(
        workspace,
        config={"mcp": {"servers": servers}},
        builtins=False,
        plugins=False,
        approve_asks=True,
    )
    await runtime.start()
    return runtime


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_titles_schemas_structured_resources_and_prompts(
    workspace: Path, transport: str, request: pytest.FixtureRequest
) -> None:
    entry = rich() if transport == "stdio" else {"url": request.getfixturevalue("http_rich")}
    rt = await mount(workspace, {"rich": entry})
    try:
        infos = {i.name: i for i in rt.tools()}
        assert infos["mcp__rich__stats"].title == "Count the words"
        schema = infos["mcp__rich__stats"].output_schema or {}
        assert set(schema.get("properties", {})) == {"count", "words"}
        stats = await rt.call("mcp__rich__stats", {"text": "one two"})
        assert stats.result.structured == {"count": 2, "words": ["one", "two"]}

        manager = rt.service(McpManager)
        found = {r.uri: r for r in manager.resources()}
        assert found[README].remote_uri == "note://readme" and found[README].title == "Read me"
        read = await manager.read_resource(README)
        assert [getattr(c, "text", None) for c in read.contents] == ["the readme text"]

        (review,) = [p for p in manager.prompts() if p.remote_name == "review"]
        assert (review.name, review.title) == ("mcp__rich__review", "Review a file")
        assert review.arguments == (("path", None, True),)
        prompt = await manager.get_prompt("mcp__rich__review", {"path": "a.py"})
        assert prompt.messages[0].content.text == "Please review a.py."  # type: ignore[union-attr]
    finally:
        await rt.close()


async def test_a_resource_link_in_a_result_can_be_opened(workspace: Path) -> None:
    rt = await mount(workspace, {"rich": rich()})
    try:
        parts = await rt.call("mcp__rich__parts", {})
        first, link, second = parts.text.split("\n")
        assert (first, second) == ("first", "second")
        assert link.startswith(f"[resource: {README} (readme)") and "ReadMcpResource" in link

        opened = await rt.call("ReadMcpResource", {"uri": README})
        assert (opened.is_error, opened.text) == (False, "the readme text")
        logo = await rt.call("ReadMcpResource", {"uri": resource_uri("rich", "note://logo")})
        assert isinstance(logo.result.output, list)
        assert [type(p) for p in logo.result.output if isinstance(p, ImagePart)] == [ImagePart]
        wrong = await rt.call("ReadMcpResource", {"uri": "mcp://nobody/x"})
        assert wrong.is_error and "mcp://<server>/" in wrong.text and "rich" in wrong.text
    finally:
        await rt.close()


async def test_read_mcp_resource_is_offered_only_while_a_server_has_resources(
    workspace: Path,
) -> None:
    rt = await mount(workspace, {"fake": fake()})  # tools only
    try:
        assert "ReadMcpResource" not in {t.name for t in rt.tools()}
        with pytest.raises(DeftlyError, match="No mounted MCP server offers"):
            await rt.service(McpManager).read_resource("note://readme")
    finally:
        await rt.close()


@pytest.mark.parametrize("remote", ["note://readme", "file:///a b/c?d=1#e", "x", "%41/"])
def test_resource_uris_map_back_exactly(remote: str) -> None:
    for server in ("rich", "my server/2"):
        uri = resource_uri(server, remote)
        assert uri.startswith("mcp://") and parse_resource_uri(uri) == (server, remote)
    assert parse_resource_uri("note://readme") is None
