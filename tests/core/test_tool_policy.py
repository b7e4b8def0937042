"""Tool enable/disable policy and pattern diagnostics."""

from __future__ import annotations

from typing import Any

from deftly import Runtime
from deftly.policy import ToolPolicy, find_inactive_patterns
from tests.helpers import EchoTool

KNOWN = {"Read", "Bash", "Skill"}


def kinds(patterns: list[str], known: set[str] | None = KNOWN) -> list[tuple[str, str]]:
    return [
        (i.pattern, i.kind)
        for i in find_inactive_patterns(patterns, known.__contains__ if known is not None else None)
    ]


def test_pattern_diagnostics() -> None:
    assert kinds(["Read", "Bash", "mcp__github__*", "mcp__*"]) == []
    assert kinds(["Bashh", "read"]) == [("Bashh", "unknown-tool"), ("read", "unknown-tool")]
    assert kinds(["*"]) == [("*", "wildcard-not-mcp")]
    assert kinds(["Bash*"]) == [("Bash*", "wildcard-not-mcp")]
    assert kinds(["mcp__github", "mcp__"]) == [
        ("mcp__github", "incomplete-mcp-name"),
        ("mcp__", "incomplete-mcp-name"),
    ]
    assert kinds(["AnythingGoes"], None) == []


def test_globs_only_apply_to_mcp_tools() -> None:
    assert not ToolPolicy(enabled=("*",)).is_active("Read")
    assert not ToolPolicy(enabled=("*",)).is_active("mcp__github__create_pr", "mcp")
    assert ToolPolicy(enabled=("mcp__github__*",)).is_active("mcp__github__create_pr", "mcp")
    assert ToolPolicy(disabled=("*",)).is_active("Read")
    assert not ToolPolicy(disabled=("mcp__blocked__*",)).is_active("mcp__blocked__write", "mcp")
    assert ToolPolicy(disabled=("mcp__blocked__*",)).is_active("mcp__other__write", "mcp")
    assert ToolPolicy.from_lists([], ["Bash"]).enabled is None


async def test_runtime_reports_patterns_that_never_match(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(
        tools=[EchoTool],
        config={"tools": {"enabled": ["Echo", "Ech*", "Echoo"], "disabled": ["mcp__x"]}},
    )
    messages = " | ".join(d.message for d in rt.diagnostics)
    assert '"Ech*"' in messages and "wildcards" in messages
    assert '"Echoo"' in messages and "does not match any known tool" in messages
    assert '"mcp__x"' in messages and "mcp__x__*" in messages
    assert [t.name for t in rt.tools()] == ["Echo"]
