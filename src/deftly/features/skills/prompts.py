"""Skills as MCP prompts: what `deftly serve` offers for `prompts/list` and `prompts/get`.

MCP clients show prompts to their users as slash commands, so every skill a person may
start is a prompt (prompt, inline and flow skills that do not set `user-invocable: false`;
reference skills are not). The prompt's arguments are the names the skill declares in
`arguments`; a skill that declares none takes one free-text argument, `args`, which is what
a user would type after the command.

The server maps these plain objects onto the SDK's types:

    from deftly.features.skills import list_skill_prompts, get_skill_prompt

    async def on_list_prompts(ctx, params):
        return types.ListPromptsResult(prompts=[
            types.Prompt(**p.to_dict()) for p in list_skill_prompts(runtime.skills)])

    async def on_get_prompt(ctx, params):
        try:
            got = get_skill_prompt(runtime.skills, params.name, params.arguments)
        except SkillError as exc:        # unknown skill, bad argument names
            raise McpError(INVALID_PARAMS, exc.message)
        return types.GetPromptResult(description=got.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=got.text))])

`get_skill_prompt` returns the same text a slash command would add to a conversation: a
line saying the user loaded the skill, then its `<skill-loaded trigger="user-slash">` block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from deftly.contract.records import frozen
from deftly.features.skills.expand import join_arguments
from deftly.features.skills.model import Skill
from deftly.features.skills.service import SkillError, SkillService

FREE_TEXT_ARGUMENT = "args"


@frozen
class PromptArgument:
    """One argument of a skill's MCP prompt: its name, what to give, and whether it is required."""

    name: str
    description: str
    required: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The argument as `prompts/list` sends it."""
        return {"name": self.name, "description": self.description, "required": self.required}


@frozen
class SkillPrompt:
    """One entry of `prompts/list`."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...]

    def to_dict(self) -> dict[str, Any]:
        """The prompt as one entry of `prompts/list`."""
        return {
            "name": self.name,
            "description": self.description,
            "arguments": [argument.to_dict() for argument in self.arguments],
        }


@frozen
class RenderedPrompt:
    """The answer to `prompts/get`: one user message."""

    name: str
    description: str
    text: str
    role: Literal["user"] = "user"

    def to_dict(self) -> dict[str, Any]:
        """The rendered prompt as the result of `prompts/get`: its description and one user
        message."""
        return {
            "description": self.description,
            "messages": [{"role": self.role, "content": {"type": "text", "text": self.text}}],
        }


def offered_as_prompt(skill: Skill) -> bool:
    """Whether a person may start the skill, so it is offered as an MCP prompt."""
    return skill.user_activatable and skill.user_invocable


def prompt_arguments(skill: Skill) -> tuple[PromptArgument, ...]:
    """The prompt's arguments: the names the skill declares, or one free-text `args` when it
    declares none."""
    if skill.arguments:
        return tuple(
            PromptArgument(name, f"Argument {position + 1} of the skill (${name} in its text).")
            for position, name in enumerate(skill.arguments)
        )
    hint = skill.argument_hint or "What you would type after the command (optional)."
    return (PromptArgument(FREE_TEXT_ARGUMENT, hint),)


def list_skill_prompts(service: SkillService) -> list[SkillPrompt]:
    """Every skill a person may start, as a prompt, sorted by name."""
    return [
        SkillPrompt(skill.name, skill.description, prompt_arguments(skill))
        for skill in service.skills()
        if offered_as_prompt(skill)
    ]


def prompt_args(skill: Skill, values: Mapping[str, str] | None) -> str:
    """The argument string for `skill` from named prompt arguments.

    Declared arguments are joined in their declared order (quoted where needed, so `$0`,
    `$name` and `$ARGUMENTS[i]` each get one value back); the free-text one is used as is.
    """
    given = {str(k): "" if v is None else str(v) for k, v in (values or {}).items()}
    known = [a.name for a in prompt_arguments(skill)]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise SkillError(
            "skill.bad_arguments",
            f'Skill "{skill.name}" has no argument named {", ".join(repr(u) for u in unknown)}; '
            f"its arguments are: {', '.join(known)}.",
        )
    if not skill.arguments:
        return given.get(FREE_TEXT_ARGUMENT, "")
    values_in_order = [given.get(name, "") for name in skill.arguments]
    while values_in_order and values_in_order[-1] == "":
        values_in_order.pop()
    return join_arguments(values_in_order)


def get_skill_prompt(
    service: SkillService, name: str, arguments: Mapping[str, str] | None = None
) -> RenderedPrompt:
    """Render the skill `name` for a person; raises `SkillError` for an unknown skill, a
    skill that is not offered as a prompt, or argument names it does not take."""
    skill = service.require(name)
    if not offered_as_prompt(skill):
        raise SkillError(
            "skill.not_activatable",
            f'Skill "{skill.name}" is not offered as a prompt (it is a {skill.type} skill'
            + (", marked user-invocable: false" if not skill.user_invocable else "")
            + ").",
        )
    text = service.activate(skill.name, prompt_args(skill, arguments))
    return RenderedPrompt(skill.name, skill.description, text)
