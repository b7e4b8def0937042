"""`deftly serve` offers the files its results point to as resources: a background task's
log and a spilled long output are listed under the `file://` URI of the very path the
result names, and `resources/read` returns all of it (the real SDK client over stdio and
HTTP). URIs outside the session are refused with a message saying what can be read."""

from __future__ import annotations

import re
from pathlib import Path

import mcp.types as mt
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import trust_folder
from tests.mcp.test_serve import connect, text_of


@pytest.fixture
def small_budget(workspace: Path) -> Path:
    """A workspace whose results are spilled beyond 1,000 characters."""
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text("[output]\nmax_chars = 1000\n", encoding="utf-8")
    lines = "".join(f"line {n:05d} of a long file\n" for n in range(4000))
    (workspace / "long.txt").write_text(lines, encoding="utf-8")
    trust_folder(workspace)
    return workspace


def _paths_in(text: str) -> list[Path]:
    return [Path(p.rstrip(".")) for p in re.findall(r"(/\S+\.(?:log|txt|out))", text)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_task_log_and_a_spilled_output_can_be_read(
    small_budget: Path, transport: str
) -> None:
    async with connect(small_budget, transport, "legacy") as client:
        started = await client.call_tool(
            "Bash", {"command": "seq 1 3000", "run_in_background": True}
        )
        [log_path] = [p for p in _paths_in(text_of(started)) if p.suffix == ".log"]
        await client.call_tool("WaitFor", {"timeout": 60})

        long = await client.call_tool("Bash", {"command": "cat long.txt"})
        assert not long.is_error
        spilled = [p for p in _paths_in(text_of(long)) if "spill" in p.parts]
        assert spilled, f"the long output was not spilled: {text_of(long)[-500:]}"

        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert log_path.as_uri() in listed
        assert spilled[0].as_uri() in listed
        assert listed[log_path.as_uri()].mime_type

        log = await client.read_resource(log_path.as_uri())
        [content] = log.contents
        assert isinstance(content, mt.TextResourceContents)
        assert content.text.splitlines()[-1] == "3000"

        full = await client.read_resource(spilled[0].as_uri())
        [content] = full.contents
        assert isinstance(content, mt.TextResourceContents)
        assert content.text == spilled[0].read_text()  # all of what the result cut short
        assert "line 03999 of a long file" in content.text
        # the command's own log, which the spilled text names in turn, is there too
        logs = [p for p in _paths_in(content.text + text_of(long)) if p.suffix == ".log"]
        assert logs and all(p.as_uri() in listed for p in logs)

        templates = (await client.list_resource_templates()).resource_templates
        assert any(t.uri_template.endswith("/spill/{name}") for t in templates)

        for outside in [(small_budget / "long.txt").as_uri(), "deftly://nothing"]:
            with pytest.raises(MCPError) as refused:
                await client.read_resource(outside)
            assert "resources/list" in str(refused.value) or "No mounted" in str(refused.value)
