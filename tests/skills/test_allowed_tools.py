"""`allowed-tools:` in a SKILL.md is honoured: once the skill is loaded, a call to a tool
outside its list (or outside the pattern of a `Tool(pattern)` entry) is refused with a
message naming the skill and its allowed tools, until another skill load replaces the limit
or the host ends the skill."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deftly.execution.calls import Outcome
from deftly.features.skills.allowed import allowed_tools
from tests.skills.conftest import write_skill


@pytest.fixture
def skill_workspace(workspace: Path) -> Path:
    skills = workspace / ".deftly" / "skills"
    write_skill(
        skills,
        "review",
        "name: review\ndescription: Review code.\nallowed-tools: Read, Grep, Bash(git diff:*)",
        body="Read the diff and comment.",
    )
    write_skill(skills, "anything", "name: anything\ndescription: No limits.", body="Go.")
    write_skill(
        skills,
        "listed",
        {"name": "listed", "description": "YAML list.", "allowed-tools": ["Glob", "mcp__gh__*"]},
    )
    (workspace / "a.txt").write_text("alpha\n")
    return workspace


async def test_a_tool_outside_the_list_is_refused_naming_the_skill(
    skill_workspace: Path, make_runtime: Any
) -> None:
    rt = await make_runtime(root=skill_workspace)
    assert not (await rt.call("Glob", {"pattern": "*.txt"})).is_error  # no skill yet

    loaded = await rt.call("Skill", {"skill": "review"})
    assert not loaded.is_error
    assert "only these tools may be called" in loaded.text
    assert "Read, Grep, Bash(git diff:*)" in loaded.text

    refused = await rt.call("Glob", {"pattern": "*.txt"})
    assert refused.is_error and refused.outcome is Outcome.PREFLIGHT_REJECTED
    assert 'skill "review"' in refused.text
    assert "Read, Grep, Bash(git diff:*)" in refused.text
    assert "alpha" in (await rt.call("Read", {"path": "a.txt"})).text  # listed: allowed
    # Bash is listed only as Bash(git diff:*): other commands are refused, that one runs.
    echo = await rt.call("Bash", {"command": "echo hi"})
    assert echo.is_error and echo.outcome is Outcome.VETOED
    assert 'skill "review"' in echo.text and "Bash(git diff:*)" in echo.text
    chained = await rt.call("Bash", {"command": "git diff && touch pwned"})
    assert chained.is_error and not (skill_workspace / "pwned").exists()
    diff = await rt.call("Bash", {"command": "git diff --stat"})
    assert diff.outcome is Outcome.EXECUTED, diff.text

    # Loading a skill without allowed-tools ends the limit.
    assert not (await rt.call("Skill", {"skill": "anything"})).is_error
    assert not (await rt.call("Glob", {"pattern": "*.txt"})).is_error


async def test_the_next_limit_replaces_the_last_and_the_host_can_end_it(
    skill_workspace: Path, make_runtime: Any
) -> None:
    rt = await make_runtime(root=skill_workspace)
    await rt.call("Skill", {"skill": "review"})
    await rt.call("Skill", {"skill": "listed"})
    assert not (await rt.call("Glob", {"pattern": "*.txt"})).is_error
    refused = await rt.call("Read", {"path": "a.txt"})
    assert refused.is_error and 'skill "listed"' in refused.text and "mcp__gh__*" in refused.text
    rt.skills.end_skill()
    assert not (await rt.call("Read", {"path": "a.txt"})).is_error


async def test_a_person_starting_the_skill_sets_the_limit_too(
    skill_workspace: Path, make_runtime: Any
) -> None:
    rt = await make_runtime(root=skill_workspace)
    text = rt.skills.activate("review")
    assert "only these tools may be called" in text
    assert (await rt.call("Glob", {"pattern": "*"})).is_error


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Read, Grep", ("Read", "Grep")),
        ("Read Grep", ("Read", "Grep")),
        (
            "Bash(git add:*), Bash(git status:*), Read",
            ("Bash(git add:*)", "Bash(git status:*)", "Read"),
        ),
        ("Bash(git diff:*) Read", ("Bash(git diff:*)", "Read")),
        (["Read", "Edit"], ("Read", "Edit")),
        ("", ()),
    ],
)
def test_allowed_tools_are_read_as_claude_code_writes_them(
    raw: Any, expected: tuple[str, ...]
) -> None:
    assert allowed_tools({"allowed-tools": raw}) == expected
    assert allowed_tools({}) is None
