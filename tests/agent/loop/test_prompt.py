"""The system prompt's instruction files: real files only, never a link (it could lead to
a key file)."""

from __future__ import annotations

from pathlib import Path

from deftly.agent.prompt import PromptContext, build_system_prompt, read_instructions
from deftly.contract.fs import LOCAL_PROBE


def test_a_linked_instruction_file_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("SECRET-KEY-MATERIAL\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").symlink_to(secret)
    (workspace / "CLAUDE.md").write_text("be terse\n")
    found = read_instructions(workspace, LOCAL_PROBE)
    assert found == [("CLAUDE.md", "be terse\n")]
    prompt = build_system_prompt(PromptContext(workspace=workspace, instructions=found))
    assert "SECRET" not in prompt and "be terse" in prompt
