"""Skill: the model loads a skill (a Markdown manual) into the conversation by name.

The tool is a thin handle: the runtime's skill service (`deftly.features.skills.SkillService`) owns
the catalog, the rendering and the nesting count. The tool only knows the small surface
it needs (`SkillHost`), so the tools layer does not depend on the skills package.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import (
    Accesses,
    SkillCallDisplay,
    Tool,
    ToolContext,
    ToolExecution,
    ToolResult,
    ToolTraits,
    describe,
)
from deftly.policy import glob_matches, literal_rule


@runtime_checkable
class SkillHost(Protocol):
    """What the Skill tool needs from the runtime's skill service."""

    @property
    def max_depth(self) -> int:
        """How deeply skill loads may nest before one is refused."""
        ...

    def model_listing(self) -> str:
        """The list of loadable skills as the Skill tool's description shows it to the model."""
        ...

    def load_for_model(self, name: str, args: str = "") -> ToolResult:
        """Load the skill `name` with `args` for the model: a result carrying its rendered
        instructions, or an error result saying why not (unknown name, nested too deep)."""
        ...


class SkillParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    skill: str = Field(
        description="The name of the skill to load, as it appears in the skill list."
    )
    args: str | None = Field(
        None,
        description="Arguments for the skill, written like a command line (words separated by "
        'spaces, "quotes" group words). Leave out when the skill needs none.',
    )


class SkillTool(Tool[SkillParams]):
    """`Skill`: the model loads a skill by name, with arguments, and gets its instructions in the
    conversation."""

    name = "Skill"
    title = "Use a skill"
    description = describe("skill.md")
    params = SkillParams
    traits = ToolTraits(read_only=True)

    def __init__(self, skills: SkillHost):
        self.skills = skills

    def description_vars(self) -> Mapping[str, object]:
        listing = self.skills.model_listing() or "No skills are available right now."
        return {"SKILLS": listing, "MAX_DEPTH": self.skills.max_depth}

    def resolve(self, args: SkillParams) -> ToolExecution | ToolResult:
        name = args.skill.strip()
        if not name:
            return ToolResult.error(
                'The "skill" argument is empty. Pass the name of a skill from the skill list.'
            )
        arguments = args.args or ""

        async def run(ctx: ToolContext) -> ToolResult:
            # The first load may walk the skill directories: keep that off the event loop.
            return await asyncio.to_thread(self.skills.load_for_model, name, arguments)

        return ToolExecution(
            accesses=Accesses.none(),
            display=SkillCallDisplay(skill_name=name, args=arguments or None),
            description=f"Load skill {name}",
            approval_rule=literal_rule(self.name, name),
            matches_rule=lambda pattern: glob_matches(name, pattern, ignore_case=True),
            execute=run,
        )
