"""Counter: adds the configured step to the session's count (kept in the session store)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolExecution, ToolTraits
from deftly.session.store import StateSlot


class CounterState(BaseModel):
    """What the session keeps: the count so far."""

    count: int = 0


class Count:
    """The session's counter (a session service the tool gets by type)."""

    def __init__(self, slot: StateSlot[CounterState], step: int) -> None:
        self.slot = slot
        self.step = step

    def add(self, times: int) -> int:
        """Add the step `times` times; the new count."""
        state = self.slot.update(lambda s: CounterState(count=s.count + self.step * times))
        return state.count


class CounterParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    times: int = Field(1, ge=1, le=10, description="How many steps to add.")


class CounterTool(Tool[CounterParams]):
    """Adds to the session's count."""

    name = "Counter"
    description = describe("counter.md")
    params = CounterParams
    traits = ToolTraits(idempotent=False)

    def __init__(self, count: Count) -> None:
        self.count = count

    def resolve(self, args: CounterParams) -> ToolExecution:
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description="Counting",
            execute=lambda ctx: ToolResult.ok(f"count: {self.count.add(args.times)}"),
        )
