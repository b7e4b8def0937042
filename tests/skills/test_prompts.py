"""Skills as MCP prompts: the API `deftly serve` calls, directly and through the SDK."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from deftly.features.skills import SkillError, SkillService, get_skill_prompt, list_skill_prompts
from tests.conftest import repo_root
from tests.skills.conftest import write_skill


@pytest.fixture
def service(workspace: Path, skills_home: Path) -> SkillService:
    skills = workspace / ".deftly" / "skills"
    write_skill(
        skills,
        "greet",
        "name: greet\ndescription: Greet someone.\narguments: [who, how]",
        body="Hello $who, $how! (all: $ARGUMENTS)",
    )
    write_skill(
        skills,
        "free",
        "name: free\ndescription: Free text.\nargument-hint: '[file]'",
        body="Look at $0.",
    )
    write_skill(
        skills, "people-only", "name: people-only\ndescription: d\ndisable-model-invocation: true"
    )
    write_skill(skills, "a-flow", "name: a-flow\ndescription: d\ntype: flow")
    write_skill(skills, "handbook", "name: handbook\ndescription: d\ntype: reference")
    write_skill(skills, "hidden", "name: hidden\ndescription: d\nuser-invocable: false")
    return SkillService(workspace, home=skills_home, session_id="s1")


def test_prompt_list(service: SkillService) -> None:
    prompts = {p.name: p for p in list_skill_prompts(service)}
    assert sorted(prompts) == [
        "a-flow",
        "commit",
        "free",
        "greet",
        "people-only",
        "review-changes",
        "write-skill",
    ]  # reference skills and user-invocable: false ones are not offered
    greet = prompts["greet"].to_dict()
    assert greet["description"] == "Greet someone."
    assert [(a["name"], a["required"]) for a in greet["arguments"]] == [
        ("who", False),
        ("how", False),
    ]
    free = prompts["free"].to_dict()
    assert free["arguments"] == [{"name": "args", "description": "[file]", "required": False}]


def test_get_prompt_with_named_arguments(service: SkillService) -> None:
    got = get_skill_prompt(service, "GREET", {"who": "Ada Lovelace", "how": "<warmly>"})
    assert got.name == "greet" and got.description == "Greet someone."
    assert got.text.startswith('The user loaded the skill "greet".')
    assert 'trigger="user-slash" source="project"' in got.text
    assert 'Hello Ada Lovelace, &lt;warmly&gt;! (all: "Ada Lovelace" &lt;warmly&gt;)' in got.text
    only_second = get_skill_prompt(service, "greet", {"how": "softly"})
    assert "Hello , softly!" in only_second.text
    none = get_skill_prompt(service, "greet")
    assert "Hello , !" in none.text and "ARGUMENTS:" not in none.text
    assert got.to_dict()["messages"][0]["role"] == "user"


def test_get_prompt_with_free_text_and_user_only_skills(service: SkillService) -> None:
    got = get_skill_prompt(service, "free", {"args": "src/app.py extra"})
    assert "Look at src/app.py." in got.text
    people = get_skill_prompt(service, "people-only", {"args": "x"})
    assert "ARGUMENTS: x" in people.text
    flow = get_skill_prompt(service, "a-flow")
    assert 'name="a-flow"' in flow.text


@pytest.mark.parametrize(
    ("name", "arguments", "code", "fragment"),
    [
        ("nope", None, "skill.not_found", 'There is no skill named "nope"'),
        ("greet", {"whom": "x"}, "skill.bad_arguments", "no argument named 'whom'"),
        ("free", {"who": "x"}, "skill.bad_arguments", "its arguments are: args"),
        ("handbook", None, "skill.not_activatable", "reference skill"),
        ("hidden", None, "skill.not_activatable", "user-invocable: false"),
    ],
)
def test_get_prompt_errors(
    service: SkillService, name: str, arguments: dict[str, str] | None, code: str, fragment: str
) -> None:
    with pytest.raises(SkillError) as info:
        get_skill_prompt(service, name, arguments)
    assert info.value.code == code and fragment in info.value.message


def test_getting_a_prompt_starts_a_new_chain_of_skill_loads(service: SkillService) -> None:
    for _ in range(3):
        service.nesting.record(service.nesting.depth)
        service.nesting.next_step()
    assert service.load_for_model("greet").is_error  # four loads in a row: too deep
    get_skill_prompt(service, "free")
    assert not service.load_for_model("greet").is_error


async def test_prompts_over_a_real_mcp_pipe(
    service: SkillService, workspace: Path, skills_home: Path, isolated_home: Path
) -> None:
    """The SDK client drives `deftly serve` over a real stdio pipe."""
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("deftly")),
        args=["serve", "--workspace", str(workspace)],
        env={
            "HOME": str(skills_home),
            "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
            "DEFTLY_HOME": str(isolated_home / "deftly-data"),
            "PYTHONPATH": str(repo_root()),
        },
        cwd=str(repo_root()),
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            await session.initialize()
            listed = await session.list_prompts()
            by_name = {p.name: p for p in listed.prompts}
            assert sorted(by_name) == sorted(p.name for p in list_skill_prompts(service))
            greet = by_name["greet"]
            assert greet.description == "Greet someone."
            assert [a.name for a in greet.arguments or []] == ["who", "how"]

            got = await session.get_prompt("greet", {"who": "Ada", "how": "warmly"})
            [message] = got.messages
            assert message.role == "user"
            assert isinstance(message.content, types.TextContent)
            assert "Hello Ada, warmly!" in message.content.text
            assert '<skill-loaded name="greet" trigger="user-slash"' in message.content.text

            with pytest.raises(MCPError) as info:
                await session.get_prompt("greet", {"bogus": "x"})
            assert info.value.code == types.INVALID_PARAMS
            assert "no argument named 'bogus'" in info.value.message
