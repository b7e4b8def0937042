"""Host tools: declared by the application with a JSON schema, run by its callback."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from deftly.contract.result import ToolResult
from deftly.contract.schema import JsonSchema
from deftly.contract.tool import SchemaTool, ToolContext, ToolExecution, ToolTraits

HostHandler: TypeAlias = Callable[
    [dict[str, Any], ToolContext], "Awaitable[ToolResult | str] | ToolResult | str"
]


class HostTool(SchemaTool):
    """A tool the host runs. It declares no accesses, so it runs alone in a batch; its
    approval rule is its name. The host says what it is like with `traits` (a host tool
    that writes files declares `writes_files`, and plan mode treats it like Write); by
    default it declares nothing, so it is not read-only and no guard counts it as more."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: JsonSchema,
        handler: HostHandler,
        *,
        traits: ToolTraits | None = None,
    ) -> None:
        super().__init__(name, description or "No description provided.", parameters)
        self._handler = handler
        if traits is not None:
            self.traits = traits

    def resolve(self, args: dict[str, Any]) -> ToolExecution:
        return ToolExecution(approval_rule=self.name, execute=lambda ctx: self._run(args, ctx))

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        value = self._handler(args, ctx)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, str):
            return ToolResult.ok(value)
        return value
