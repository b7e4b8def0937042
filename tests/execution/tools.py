"""Small real tools and a bare executor for the execution tests (no runtime around it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from deftly.contract import Accesses, Tool, ToolContext, ToolExecution, ToolResult, ToolUpdate
from deftly.execution import Executor, ToolCall
from deftly.execution.spill import Spiller
from deftly.registry.registry import ToolRegistry


class Free(BaseModel):
    """Any arguments (one optional value)."""

    model_config = ConfigDict(extra="forbid")
    value: object = None


Work = Callable[[ToolContext], Any]


class WorkTool(Tool[Free]):
    """A tool whose `execute` is the function given (and whose resolve may be too)."""

    params = Free

    def __init__(self, name: str, work: Work, resolve: Callable[[Free], Any] | None = None):
        self.name = name
        self.description = name
        self._work = work
        self._resolve = resolve

    def resolve(self, args: Free) -> Any:
        if self._resolve is not None:
            return self._resolve(args)
        return ToolExecution(approval_rule=self.name, accesses=Accesses.none(), execute=self._work)


def reporting(contexts: list[ToolContext]) -> Work:
    """Work that keeps its context, reports one progress line and says "ok"."""

    def work(ctx: ToolContext) -> ToolResult:
        contexts.append(ctx)
        ctx.report(ToolUpdate("stdout", "working"))
        return ToolResult.ok("ok")

    return work


def executor(tmp_path: Path, *tools: Tool[Any], **options: Any) -> Executor:
    """A bare executor over `tools`, spilling into `tmp_path`."""
    registry = ToolRegistry()
    for tool in tools:
        registry.register(tool)
    return Executor(registry, Spiller(tmp_path / "spill"), **options)


def calls(*names: str) -> list[ToolCall]:
    """One call per name, ids c1, c2, ..."""
    return [ToolCall(f"c{i}", name, {}) for i, name in enumerate(names, 1)]
