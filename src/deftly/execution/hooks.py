"""Hook chains around execution.

*Before* hooks run for each call after it resolved and before it runs, in order. Each may
say nothing (go on), `Allow` (final: skip the rest of the chain and run), `Proceed`
(approve but let later hooks speak) or `Veto` (do not run; this result stands instead). The
permission gate, plan mode and external PreToolUse hooks are before hooks.

*After* hooks see every finished call (whatever its outcome) and may replace its result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias, TypeVar

from deftly.contract.result import ToolResult
from deftly.contract.tool import BaseTool, CancelToken, ToolExecution
from deftly.execution.calls import Outcome, ToolCall

H = TypeVar("H")


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the call now; later before-hooks are not asked."""

    metadata: Any = None


@dataclass(frozen=True, slots=True)
class Proceed:
    """Approve, leaving metadata for `execute`; later hooks still run."""

    metadata: Any = None


@dataclass(frozen=True, slots=True)
class Veto:
    result: ToolResult


Decision: TypeAlias = Allow | Proceed | Veto | None


@dataclass(frozen=True, slots=True)
class BeforeContext:
    call: ToolCall
    tool: BaseTool
    args: Any
    execution: ToolExecution
    batch: Sequence[ToolCall]
    cancel: CancelToken


@dataclass(frozen=True, slots=True)
class AfterContext:
    call: ToolCall
    tool: BaseTool | None
    args: Any
    outcome: Outcome
    result: ToolResult
    execution: ToolExecution | None


BeforeHook: TypeAlias = Callable[[BeforeContext], Awaitable[Decision]]
AfterHook: TypeAlias = Callable[[AfterContext], Awaitable[ToolResult | None]]


@dataclass(frozen=True, slots=True)
class _Entry(Generic[H]):
    id: str
    order: int
    seq: int
    hook: H


@dataclass
class HookChain(Generic[H]):
    """Hooks kept sorted by `order` (then insertion); adding an id again replaces it."""

    _entries: list[_Entry[H]] = field(default_factory=list)
    _seq: int = 0

    def add(self, hook_id: str, hook: H, *, order: int = 0) -> Callable[[], None]:
        self._entries = [e for e in self._entries if e.id != hook_id]
        self._seq += 1
        entry = _Entry(hook_id, order, self._seq, hook)
        self._entries.append(entry)
        self._entries.sort(key=lambda e: (e.order, e.seq))

        def remove() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return remove

    def __iter__(self) -> Any:
        return iter([(e.id, e.hook) for e in self._entries])

    def __len__(self) -> int:
        return len(self._entries)
