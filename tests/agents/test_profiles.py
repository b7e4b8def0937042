"""Sub-agent types from Markdown files: the fields other agents' files use, what breaks a
file (a diagnostic, never a crash), which folder wins, and the `[agents]` table in an
untrusted workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deftly import Runtime
from deftly.features.agents.profile_files import (
    INHERIT_MODELS,
    ProfileFileError,
    load_profiles,
    parse_profile,
    render_profile,
)
from deftly.features.agents.profiles import BUILTIN_PROFILES, READ_ONLY_TOOLS
from deftly.session.subagents import AgentProfile
from tests.agents.helpers import features

CLAUDE_STYLE = """\
---
name: code-reviewer
description: Expert code review specialist. Use after writing code.
tools: Read, Grep, Glob, LS, WebFetch
model: sonnet
---
You are a senior code reviewer.

Report each problem with its file and line.
"""


def test_an_agent_file_in_the_shape_other_agents_use_works() -> None:
    profile = parse_profile(CLAUDE_STYLE, "/x/code-reviewer.md")
    assert profile == AgentProfile(
        name="code-reviewer",
        description="Expert code review specialist. Use after writing code.",
        tools=("Read", "Grep", "Glob", "ListDirectory", "FetchURL"),
        model=None,  # another vendor's alias: the parent's model
        instructions=(
            "You are a senior code reviewer.\n\nReport each problem with its file and line."
        ),
        source="/x/code-reviewer.md",
    )


def test_lists_disallowed_tools_and_a_configured_model() -> None:
    profile = parse_profile(
        "---\nname: fixer\ndescription: fixes\ntools: [Read, Edit, Read]\n"
        "disallowedTools: Bash\nmodel: fast\n---\nFix it.\n"
    )
    assert (profile.tools, profile.disallowed_tools, profile.model) == (
        ("Read", "Edit"),
        ("Bash",),
        "fast",
    )
    assert parse_profile("---\nname: all\ndescription: d\n---\n").tools is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter\n", "no front matter"),
        ("---\nname: x\n", 'no closing "---"'),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\ndescription: d\n---\n", 'no "name"'),
        ("---\nname: x\n---\n", 'no "description"'),
        ("---\nname: ../evil\ndescription: d\n---\n", "not usable"),
        ("---\nname: x\ndescription: d\ntools: 3\n---\n", '"tools" must be'),
        ("---\nname: x\ndescription: d\ntools: [1]\n---\n", "tool names"),
        ("---\nname: x\ndescription: [1]\n---\n", '"description" must be text'),
    ],
)
def test_a_broken_file_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ProfileFileError, match=problem.replace("[", r"\[")):
        parse_profile(text)


names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True)
words = (
    st.text(
        st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff"),
        min_size=1,
        max_size=40,
    )
    .map(lambda s: " ".join(s.split()))
    .filter(bool)
)
tool_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: n not in ("LS", "WebFetch", "TodoWrite", "MultiEdit", "Task")
)
bodies = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).map(
    lambda s: "\n".join(line for line in s.splitlines() if line.strip() != "---").strip()
)


@given(
    name=names,
    description=words,
    tools=st.none() | st.lists(tool_names, unique=True, max_size=5).map(tuple),
    disallowed=st.lists(tool_names, unique=True, max_size=3).map(tuple),
    model=st.none() | names.filter(lambda m: m.lower() not in INHERIT_MODELS),
    body=bodies,
)
def test_a_profile_written_out_reads_back_the_same(
    name: str,
    description: str,
    tools: tuple[str, ...] | None,
    disallowed: tuple[str, ...],
    model: str | None,
    body: str,
) -> None:
    profile = AgentProfile(name, description, tools, disallowed, model, body, "f.md")
    assert parse_profile(render_profile(profile), "f.md") == profile


def test_folders_load_in_order_and_broken_files_are_problems(tmp_path: Path) -> None:
    user, workspace = tmp_path / "user", tmp_path / "ws"
    for folder in (user, workspace):
        folder.mkdir()
    (user / "a.md").write_text("---\nname: shared\ndescription: from the user\n---\n")
    (user / "notes.txt").write_text("not a profile")
    (workspace / "b.md").write_text("---\nname: shared\ndescription: from the workspace\n---\n")
    (workspace / "broken.md").write_text("---\nname: x\n")
    (workspace / "binary.md").write_bytes(b"\xff\xfe\x00")
    loaded = load_profiles([user, workspace, tmp_path / "missing"])
    assert [(p.name, p.description) for p in loaded.profiles] == [("shared", "from the workspace")]
    problems = dict(loaded.problems)
    assert 'no closing "---"' in problems[str(workspace / "broken.md")]
    assert "not UTF-8" in problems[str(workspace / "binary.md")]


def test_the_builtin_types() -> None:
    by_name = {p.name: p for p in BUILTIN_PROFILES}
    assert list(by_name) == ["coder", "explore", "plan"]
    assert by_name["coder"].tools is None
    assert (
        by_name["explore"].tools
        == READ_ONLY_TOOLS
        == (
            "Read",
            "Glob",
            "Grep",
            "ReadMediaFile",
            "ListDirectory",
            "FetchURL",
            "WebSearch",
        )
    )


async def test_the_desk_has_builtin_user_and_workspace_types_and_a_diagnostic(
    make_runtime: Any, workspace: Path, tmp_path: Path
) -> None:
    import os

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "agents"
    user.mkdir(parents=True)
    (user / "mine.md").write_text("---\nname: mine\ndescription: the user's own\n---\nBe brief.\n")
    local = workspace / ".deftly" / "agents"
    local.mkdir(parents=True)
    (local / "explore.md").write_text(
        "---\nname: explore\ndescription: this repo's explorer\ntools: Read\n---\n"
    )
    (local / "bad.md").write_text("---\nname: [\n---\n")
    runtime = await make_runtime(features=features())
    desk = runtime.agent.subagents
    assert list(desk.profiles) == ["coder", "explore", "plan", "mine"]
    assert desk.profiles["explore"].description == "this repo's explorer"
    assert desk.profiles["mine"].instructions == "Be brief."
    [problem] = [d for d in runtime.diagnostics if "bad.md" in d.source]
    assert "not valid YAML" in problem.message


async def test_untrusted_workspace_agents_settings_only_narrow(workspace: Path) -> None:
    config_dir = workspace / ".deftly"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(
        "[agents]\nmax_depth = 5\nmax_concurrency = 2\ntimeout = 60\n"
    )
    async with Runtime(workspace, features=features(), plugins=False, trust=False) as runtime:
        agents = runtime.config.agents
        assert (agents.max_depth, agents.max_concurrency, agents.timeout) == (2, 2, 60)
        text = " ".join(d.message for d in runtime.diagnostics)
        assert "[agents] max_depth = 5" in text
    async with Runtime(workspace, features=features(), plugins=False, trust=True) as runtime:
        assert runtime.config.agents.max_depth == 5
