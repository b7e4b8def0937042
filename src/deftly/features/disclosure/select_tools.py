"""select_tools: load deferred tools' definitions by name (deferred disclosure)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolExecution, ToolTraits
from deftly.features.disclosure.disclosure import SELECT_TOOLS, DeferredTools


class SelectToolsParams(BaseModel):
    """The arguments of select_tools: the names to load."""

    model_config = ConfigDict(extra="forbid")
    names: list[str] = Field(
        min_length=1,
        description="Exact names of deferred tools to load, as announced.",
    )


class SelectTools(Tool[SelectToolsParams]):
    """Loads deferred tools' definitions by name, so the next request lists them."""

    name = SELECT_TOOLS
    title = "Load more tools"
    description = describe("select_tools.md")
    params = SelectToolsParams
    traits = ToolTraits(read_only=True, idempotent=True, discloses_tools=True)

    def __init__(self, deferred: DeferredTools) -> None:
        self.deferred = deferred

    def resolve(self, args: SelectToolsParams) -> ToolExecution:
        """A call that touches nothing and loads `args.names` when it runs."""
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description=f"Loading {', '.join(args.names)}",
            execute=lambda ctx: self._load(args.names),
        )

    def _load(self, names: list[str]) -> ToolResult:
        if not self.deferred.enabled:
            return ToolResult.error(
                "select_tools is switched off here: every tool you can call is already in your "
                "tool list."
            )
        outcome = self.deferred.load(names)
        if outcome.failed:
            return ToolResult.error(outcome.text())
        return ToolResult.ok(outcome.text())
