"""Hook chains around execution.

*Before* hooks run for each call after it resolved and before it runs, in order. Each may
say nothing (go on), `Allow` (final: skip the rest of the chain and run), `Proceed`
(approve but let later hooks speak) or `Veto` (do not run; this result stands instead). The
permission gate, plan mode and external PreToolUse hooks are before hooks.

*After* hooks see every finished call (whatever its outcome) and may replace its result.

Built-in before-hooks sit at fixed places (`HookOrder`); a hook added without an order runs
at 0: after deny rules, plan mode and external PreToolUse hooks, before anyone is asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, TypeAlias, TypeVar

from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.tool import BaseTool, CancelToken, ToolExecution
from deftly.execution.calls import Outcome, ToolCall

H = TypeVar("H")


class HookOrder(IntEnum):
    """Where the runtime's own before-hooks sit in the chain (lower runs first)."""

    PERMISSION_CHECK = -1000
    """Deny rules veto before anything else runs (nothing can override a deny)."""
    PLAN_GUARD = -900
    """Plan mode refuses edits and reviews the plan."""
    EXTERNAL = -800
    """PreToolUse commands from the `[hooks]` config."""
    DEFAULT = 0
    """In-process hooks added by a host."""
    APPROVAL = 1000
    """The permission gate approves, or asks a person; last, so nobody is asked about a
    call that a later check would refuse anyway."""


@frozen
class Allow:
    """Run the call now; later before-hooks are not asked. `handoff` is a value for the
    tool's `execute`, which reads it by type: `ctx.handoff(PlanReview)`."""

    handoff: object = None


@frozen
class Proceed:
    """Approve, handing `handoff` (if any) to `execute` (`ctx.handoff(type)`); later
    hooks still run."""

    handoff: object = None


@frozen
class Veto:
    """Do not run the call: `result` stands instead."""

    result: ToolResult


Decision: TypeAlias = Allow | Proceed | Veto | None


@frozen
class BeforeContext:
    """What a before-hook sees: the call, its tool, arguments and resolved execution, the
    whole batch, its cancel token, and whose call it is."""

    call: ToolCall
    tool: BaseTool
    args: Any
    execution: ToolExecution
    batch: Sequence[ToolCall]
    cancel: CancelToken
    identity: Identity = field(default_factory=Identity)


@frozen
class AfterContext:
    """What an after-hook sees: the call, how it ended and its result, and whose it is."""

    call: ToolCall
    tool: BaseTool | None
    args: Any
    outcome: Outcome
    result: ToolResult
    execution: ToolExecution | None
    identity: Identity = field(default_factory=Identity)


BeforeHook: TypeAlias = Callable[[BeforeContext], Awaitable[Decision]]
AfterHook: TypeAlias = Callable[[AfterContext], Awaitable[ToolResult | None]]


@frozen
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
        """Put `hook` in the chain at `order`; returns the way to take it out again."""
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
