"""The Skill tool, through a real Runtime and its executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime, ToolCall
from deftly.contract import SkillCallDisplay
from deftly.contract.errors import ConfigError
from tests.helpers import EchoTool
from tests.skills.conftest import write_skill


@pytest.fixture
def user_skills(skills_home: Path) -> Path:
    return skills_home / ".agents" / "skills"


@pytest.fixture
def project_skills(workspace: Path) -> Path:
    return workspace / ".deftly" / "skills"


async def load(rt: Runtime, skill: str, args: str | None = None) -> Any:
    arguments: dict[str, Any] = {"skill": skill}
    if args is not None:
        arguments["args"] = args
    return await rt.call("Skill", arguments)


def trigger_of(result: Any) -> str:
    tag = next(line for line in result.text.splitlines() if line.startswith("<skill-loaded"))
    return tag.split('trigger="', 1)[1].split('"', 1)[0]


async def test_loading_a_skill(make_runtime: Any, user_skills: Path) -> None:
    # reference case 14 / builtin-tools case 55
    write_skill(user_skills, "commit", body="Commit the change.")
    rt: Runtime = await make_runtime(approve_asks=True)
    result = await load(rt, "commit", "src/app.ts")
    assert not result.is_error, result.text
    skill_dir = user_skills / "commit"
    tag = (
        f'<skill-loaded name="commit" trigger="model-tool" source="user" dir="{skill_dir}" '
        'args="src/app.ts">'
    )
    assert result.text.startswith('Skill "commit" loaded.')
    assert tag in result.text and "ARGUMENTS: src/app.ts" in result.text
    delivery = result.result.delivery
    assert delivery is not None and tag in delivery and "ARGUMENTS: src/app.ts" in delivery
    assert delivery.startswith("The Skill tool loaded instructions")
    assert result.display == SkillCallDisplay(skill_name="commit", args="src/app.ts")
    assert result.approval_rule == "Skill(commit)"
    assert result.description == "Load skill commit"


async def test_names_are_case_insensitive(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    result = await load(rt, "  WRITE-Skill ")
    assert not result.is_error
    assert '<skill-loaded name="write-skill" trigger="model-tool" source="builtin"' in result.text


async def test_unknown_names_get_close_matches(make_runtime: Any, project_skills: Path) -> None:
    write_skill(project_skills, "deploy-staging")
    write_skill(
        project_skills, "secret", "name: secret\ndescription: d\ndisable-model-invocation: true"
    )
    rt: Runtime = await make_runtime(approve_asks=True)
    close = await load(rt, "review")
    assert close.is_error
    assert 'There is no skill named "review". Did you mean "review-changes"?' in close.text
    typo = await load(rt, "deploy-stagin")
    assert 'Did you mean "deploy-staging"?' in typo.text
    nothing_close = await load(rt, "zzzzzz")
    assert "Available skills: deploy-staging, review-changes, write-skill." in nothing_close.text
    assert "secret" not in nothing_close.text and "commit" not in nothing_close.text


async def test_user_only_flow_and_reference_skills_are_refused(
    make_runtime: Any, project_skills: Path
) -> None:
    # builtin-tools case 55
    write_skill(
        project_skills, "secret", "name: secret\ndescription: d\ndisable-model-invocation: true"
    )
    write_skill(project_skills, "flow-only", "name: flow-only\ndescription: d\ntype: flow")
    ref = write_skill(project_skills, "handbook", "name: handbook\ndescription: d\ntype: reference")
    rt: Runtime = await make_runtime(approve_asks=True)
    secret = await load(rt, "secret")
    assert secret.is_error and 'Skill "secret" can only be started by the user' in secret.text
    flow = await load(rt, "flow-only")
    assert flow.is_error and 'Skill "flow-only" is a flow skill' in flow.text
    reference = await load(rt, "handbook")
    assert reference.is_error and f"Read {ref}" in reference.text
    builtin_commit = await load(rt, "commit")  # the built-in commit skill is for people
    assert builtin_commit.is_error and "only be started by the user" in builtin_commit.text
    assert all(r.result.delivery is None for r in (secret, flow, reference, builtin_commit))


async def test_empty_skill_name(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    result = await load(rt, "   ")
    assert result.is_error and 'The "skill" argument is empty' in result.text


# -- nesting ------------------------------------------------------------------------------


async def test_nested_loads_are_counted_and_bounded(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True, tools=[EchoTool])
    triggers = [trigger_of(await load(rt, "write-skill")) for _ in range(3)]
    assert triggers == ["model-tool", "nested-skill", "nested-skill"]
    too_deep = await load(rt, "review-changes")
    assert too_deep.is_error and too_deep.result.delivery is None
    assert "nested 4 levels deep" in too_deep.text and "the limit is 3" in too_deep.text
    again = await load(rt, "review-changes")  # retrying at once does not get around it
    assert again.is_error and "nested 5 levels deep" in again.text
    await rt.call("Echo", {"text": "doing the work"})  # any other step ends the chain
    assert trigger_of(await load(rt, "review-changes")) == "model-tool"


async def test_skills_loaded_in_one_batch_are_siblings(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True, tools=[EchoTool])
    first = await rt.run_batch(
        [
            ToolCall("a", "Skill", {"skill": "write-skill"}),
            ToolCall("b", "Skill", {"skill": "review-changes"}),
            ToolCall("c", "Echo", {"text": "and some work"}),
        ]
    )
    assert [trigger_of(r) for r in first[:2]] == ["model-tool", "model-tool"]
    second = await rt.run_batch(
        [
            ToolCall("d", "Skill", {"skill": "write-skill", "args": "x"}),
            ToolCall("e", "Skill", {"skill": "review-changes", "args": "y"}),
        ]
    )
    assert [trigger_of(r) for r in second] == ["nested-skill", "nested-skill"]


async def test_a_user_activation_starts_a_new_chain(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    for _ in range(3):
        await load(rt, "write-skill")
    assert (await load(rt, "write-skill")).is_error
    text = rt.skills.activate("review-changes", "HEAD~1")
    assert text.startswith('The user loaded the skill "review-changes".')
    assert 'trigger="user-slash"' in text and "Scope: `HEAD~1`" in text
    assert trigger_of(await load(rt, "write-skill")) == "model-tool"


async def test_calls_that_fail_before_running_still_end_a_step(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    assert trigger_of(await load(rt, "write-skill")) == "model-tool"
    bad = await rt.call("NoSuchTool", {})
    assert bad.is_error
    # a step whose only call failed loaded nothing: the chain is over
    assert trigger_of(await load(rt, "write-skill")) == "model-tool"


# -- wiring -------------------------------------------------------------------------------


async def test_description_lists_the_skills_the_model_may_load(
    make_runtime: Any, project_skills: Path
) -> None:
    write_skill(
        project_skills,
        "lint",
        "name: lint\ndescription: Run the linters.\nwhen-to-use: before commits",
    )
    write_skill(
        project_skills, "secret", "name: secret\ndescription: d\ndisable-model-invocation: true"
    )
    rt: Runtime = await make_runtime(approve_asks=True)
    [info] = [t for t in rt.tools() if t.name == "Skill"]
    assert "at most 3 levels" in info.description
    assert "- lint: Run the linters.\n  When to use: before commits" in info.description
    assert "### Project" in info.description and "### Built-in" in info.description
    assert "secret" not in info.description and "- commit:" not in info.description
    assert "${" not in info.description
    assert info.parameters["required"] == ["skill"]
    assert set(info.parameters["properties"]) == {"skill", "args"}


async def test_skill_roots_become_workspace_directories(
    make_runtime: Any, user_skills: Path, tmp_path: Path
) -> None:
    write_skill(user_skills, "with-payload")
    payload = user_skills / "with-payload" / "checklist.md"
    payload.write_text("- item")
    extra = tmp_path / "extra-skills"
    write_skill(extra, "x")
    rt: Runtime = await make_runtime(config={"skills": {"extra_dirs": [str(extra)]}})
    assert rt.workspace.contains(payload)
    assert rt.workspace.contains(extra / "x" / "SKILL.md")
    builtin = rt.skills.get("write-skill")
    assert builtin is not None and rt.workspace.contains(builtin.dir / "placeholders.md")
    assert not rt.workspace.contains(tmp_path / "elsewhere.md")


async def test_rules_match_skill_names_without_regard_to_case(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime()
    entry = rt.registry.get("Skill")
    assert entry is not None
    execution = entry.tool.resolve(entry.tool.parse_args({"skill": "Review-Changes"}))
    assert execution.matches_rule("review-*") and execution.matches_rule("REVIEW-CHANGES")
    assert not execution.matches_rule("commit")
    assert execution.accesses is not None and not execution.accesses


async def test_switching_skills_off(make_runtime: Any, project_skills: Path) -> None:
    write_skill(project_skills, "mine")
    off: Runtime = await make_runtime(config={"skills": {"enabled": False}})
    assert "Skill" not in [t.name for t in off.tools()]
    with pytest.raises(ConfigError, match="switched off"):
        _ = off.skills
    some: Runtime = await make_runtime(
        config={"skills": {"disabled": ["mine", "write-*"], "builtin": True}}
    )
    assert [s.name for s in some.skills.skills()] == ["commit", "review-changes"]
    refused = await load(some, "mine")
    assert refused.is_error and 'There is no skill named "mine"' in refused.text
    tool_off: Runtime = await make_runtime(config={"tools": {"disabled": ["Skill"]}})
    assert "Skill" not in [t.name for t in tool_off.tools()]
    assert tool_off.skills.get("mine") is not None  # the catalog is still there for people


async def test_a_long_skill_keeps_its_whole_text_in_the_delivery(
    make_runtime: Any, project_skills: Path
) -> None:
    body = "\n".join(f"step {i:04d}: do something careful" for i in range(300))
    write_skill(project_skills, "long", body=body)
    rt: Runtime = await make_runtime(approve_asks=True, config={"output": {"max_chars": 2_000}})
    result = await load(rt, "long")
    assert not result.is_error and result.truncated  # the text output obeys the budget
    assert result.result.delivery is not None and body in result.result.delivery


async def test_session_id_reaches_the_skill(make_runtime: Any, project_skills: Path) -> None:
    write_skill(project_skills, "who", body="session ${DEFTLY_SESSION_ID} dir ${DEFTLY_SKILL_DIR}")
    rt: Runtime = await make_runtime(session_id="ses_test")
    text = rt.skills.render("who")
    assert f"session ses_test dir {project_skills / 'who'}" in text


async def test_reload_sees_new_skills(make_runtime: Any, project_skills: Path) -> None:
    rt: Runtime = await make_runtime(approve_asks=True)
    assert (await load(rt, "fresh")).is_error
    write_skill(project_skills, "fresh")
    rt.skills.reload()
    assert not (await load(rt, "fresh")).is_error
    assert rt.workspace.contains(project_skills / "fresh" / "SKILL.md")


async def test_unknown_name_when_no_skill_is_available(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(config={"skills": {"builtin": False}})
    result = await load(rt, "anything")
    assert result.is_error
    assert result.text == (
        'There is no skill named "anything". No skills are available. Do the task without a skill.'
    )
