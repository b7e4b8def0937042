"""A real skill, loaded by the real Skill tool through a bare executor: its text reaches
the agent's injection channel as a "skill" injection, and stays on the result."""

from __future__ import annotations

from pathlib import Path

from deftly.execution import ToolCall
from deftly.execution.notices import SKILL_KIND
from deftly.features.skills.service import SkillService
from deftly.features.skills.skill import SkillTool
from deftly.session.injections import Injections
from tests.execution.tools import executor


def write_skill(root: Path, name: str, body: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {name} skill\n---\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


async def test_a_loaded_skill_is_injected_once_and_kept_on_the_result(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_skill(workspace / ".deftly" / "skills", "commit", "Commit the change.")
    service = SkillService(workspace, home=tmp_path / "home", packages=False)
    channel = Injections()
    run = executor(tmp_path, SkillTool(service), injections=channel, notices_on_results=False)

    [loaded, unknown] = await run.run_batch(
        [
            ToolCall("c1", "Skill", {"skill": "commit", "args": "src/app.ts"}),
            ToolCall("c2", "Skill", {"skill": "nope"}),
        ]
    )
    assert not loaded.is_error, loaded.text
    assert unknown.is_error and unknown.result.delivery is None
    delivery = loaded.result.delivery
    assert delivery is not None and "Commit the change." in delivery
    assert "ARGUMENTS: src/app.ts" in delivery
    drained = channel.drain()
    assert [(item.kind, item.text) for item in drained] == [(SKILL_KIND, delivery)]
    assert channel.drain() == []
