"""Skills as MCP prompts: `prompts/list` and `prompts/get` for `deftly serve`.

MCP clients show prompts to their users as slash commands; `prompts/get` returns the same
`<skill-loaded trigger="user-slash">` block a slash command would add to a conversation.
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt
from mcp.shared.exceptions import MCPError

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
