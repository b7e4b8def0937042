"""Running batches of tool calls: executor, scheduler, hooks, events, output budget."""

from deftly.execution.calls import CallResult, Outcome, ToolCall, parse_arguments
from deftly.execution.events import (
    BatchStarted,
    Event,
    EventBus,
    RuntimeNotice,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    session_wide,
)
from deftly.execution.executor import Batch, Executor, cancelled_text
from deftly.execution.hooks import (
    AfterContext,
    AfterHook,
    Allow,
    BeforeContext,
    BeforeHook,
    Decision,
    HookChain,
    Proceed,
    Veto,
)
from deftly.execution.notices import InjectionChannel
from deftly.execution.result_builder import ResultBuilder
from deftly.execution.scheduler import Scheduler
from deftly.execution.spill import OutputBudget, Spiller

__all__ = [
    "AfterContext",
    "AfterHook",
    "Allow",
    "Batch",
    "BatchStarted",
    "BeforeContext",
    "BeforeHook",
    "CallResult",
    "Decision",
    "Event",
    "EventBus",
    "Executor",
    "HookChain",
    "InjectionChannel",
    "Outcome",
    "OutputBudget",
    "Proceed",
    "ResultBuilder",
    "RuntimeNotice",
    "Scheduler",
    "Spiller",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolProgress",
    "Veto",
    "cancelled_text",
    "parse_arguments",
    "session_wide",
]
