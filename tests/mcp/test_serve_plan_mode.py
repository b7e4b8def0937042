"""Plan mode through an MCP client: once the model entered plan mode, a shell command that
is not proven read-only does not run, in yolo mode too (issue 10). Plan mode lives in one
runtime, so `deftly serve` (one runtime for the whole connection) is where a user meets it
across calls; `deftly call` starts a fresh runtime each time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.test_serve import connect, text_of


@pytest.mark.parametrize("permission", ["yolo", "auto"])
async def test_a_redirection_does_not_run_in_plan_mode(workspace: Path, permission: str) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    async with connect(workspace, "stdio", "legacy", permission=permission) as client:
        entered = await client.call_tool("EnterPlanMode", {})
        assert not entered.is_error, text_of(entered)
        written = await client.call_tool("Bash", {"command": "echo x > f"})
        listed = await client.call_tool("Bash", {"command": "cat a.txt"})
    assert written.is_error
    assert "plan mode" in text_of(written).lower()
    assert not (workspace / "f").exists()
    assert not listed.is_error and "alpha" in text_of(listed)
