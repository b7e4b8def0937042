"""Skills as MCP prompts: `prompts/list` and `prompts/get` for `deftly serve`.

MCP clients show prompts to their users as slash commands; `prompts/get` returns the same
`<skill-loaded trigger="user-slash">` block a slash command would add to a conversation.
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt
from mcp.shared.exceptions import MCPError

from deftly.contract.errors import DeftlyError
from deftly.features.mcp.manager import McpManager
from deftly.features.skills import SkillError, SkillService, get_skill_prompt, list_skill_prompts


class SkillPrompts:
    """The two prompt handlers of the low-level server, over one skill service."""

    def __init__(self, skills: SkillService) -> None:
        self.skills = skills

    async def list_prompts(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListPromptsResult:
        """`prompts/list`: every skill a person may start, as a prompt."""
        prompts = [mt.Prompt(**prompt.to_dict()) for prompt in list_skill_prompts(self.skills)]
        return mt.ListPromptsResult(prompts=prompts)

    async def get_prompt(self, ctx: Any, params: mt.GetPromptRequestParams) -> mt.GetPromptResult:
        """`prompts/get`: the skill rendered with the given arguments, as one user message; an
        unknown skill or a bad argument is an invalid-params error."""
        try:
            got = get_skill_prompt(self.skills, params.name, params.arguments)
        except SkillError as exc:
            raise MCPError(mt.INVALID_PARAMS, exc.message) from None
        message = mt.PromptMessage(role="user", content=mt.TextContent(text=got.text))
        return mt.GetPromptResult(description=got.description, messages=[message])


class ServedPrompts:
    """The skills' prompts and the mounted servers' prompts (namespaced `mcp__server__name`),
    side by side; a name the skills do not know is asked of the mounted servers."""

    def __init__(self, skills: SkillPrompts | None, mcp: McpManager | None) -> None:
        self.skills = skills
        self.mcp = mcp

    async def list_prompts(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListPromptsResult:
        """`prompts/list`: the skills first, then the mounted servers' prompts."""
        prompts = list((await self.skills.list_prompts(ctx, params)).prompts) if self.skills else []
        for mounted in self.mcp.prompts() if self.mcp is not None else []:
            arguments = [
                mt.PromptArgument(name=name, description=description, required=required)
                for name, description, required in mounted.arguments
            ]
            prompts.append(
                mt.Prompt(
                    name=mounted.name,
                    title=mounted.title,
                    description=mounted.description,
                    arguments=arguments or None,
                )
            )
        return mt.ListPromptsResult(prompts=prompts)

    async def get_prompt(self, ctx: Any, params: mt.GetPromptRequestParams) -> mt.GetPromptResult:
        """`prompts/get`: a mounted server's prompt through its server, else a skill."""
        if self.mcp is not None and any(p.name == params.name for p in self.mcp.prompts()):
            try:
                return await self.mcp.get_prompt(params.name, params.arguments)
            except DeftlyError as exc:
                raise MCPError(mt.INVALID_PARAMS, str(exc)) from None
        if self.skills is None:
            raise MCPError(
                mt.INVALID_PARAMS,
                f'There is no prompt "{params.name}"; prompts/list shows the prompts on offer.',
            )
        return await self.skills.get_prompt(ctx, params)
