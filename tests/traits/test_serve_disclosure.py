"""`deftly serve` leaves tools about the tool list (trait `discloses_tools`) out of
`tools/list`, whatever their name: MCP clients do their own disclosure."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import trust_folder
from tests.mcp.test_serve import connect, text_of

LOADED = ["tests.traits.tools:ToolShelfTool", "tests.traits.tools:HaltTool"]


async def test_a_tool_with_the_disclosure_trait_is_not_listed(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    loads = ", ".join(f'"{t}"' for t in LOADED)
    config.write_text(f"[tools]\nload = [{loads}]\n", encoding="utf-8")
    trust_folder(workspace)
    async with connect(workspace, "stdio", "legacy") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        halted = await client.call_tool("Halt", {"text": "x"})
    assert "ToolShelf" not in listed and "select_tools" not in listed
    assert {"Halt", "Read", "Bash"} <= listed, "tools without the trait are listed"
    assert not halted.is_error and "Halt ran with x" in text_of(halted)
