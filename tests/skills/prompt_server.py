"""A minimal stdio MCP server offering a workspace's skills as prompts.

A test fixture, not the product: it wires `deftly.skills.list_skill_prompts` and
`get_skill_prompt` into the SDK's server exactly as the `deftly.skills.prompts` docstring
tells `deftly serve` to, so the SDK client can drive the API over a real pipe.

    python -m tests.skills.prompt_server WORKSPACE
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from deftly.skills import SkillError, SkillService, get_skill_prompt, list_skill_prompts


def build(service: SkillService) -> Server[Any]:
    async def on_list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        prompts = [types.Prompt(**p.to_dict()) for p in list_skill_prompts(service)]
        return types.ListPromptsResult(prompts=prompts)

    async def on_get_prompt(
        ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            got = get_skill_prompt(service, params.name, params.arguments)
        except SkillError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        message = types.PromptMessage(role="user", content=types.TextContent(text=got.text))
        return types.GetPromptResult(description=got.description, messages=[message])

    return Server(
        "deftly-skills-test", on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt
    )


async def main(workspace: str) -> None:
    server = build(SkillService(workspace, session_id="mcp-session"))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
