"""deftly: a hardened tool runtime for coding agents.

A model only talks; deftly takes its tool calls and lands them, precisely and safely, on
real files and processes. Start with `Runtime`:

    from deftly import Runtime

    async with Runtime("path/to/repo", mode="manual") as rt:
        result = await rt.call("Read", {"path": "README.md"})

Everything a user of the library or a tool writer needs is importable from here: the
runtime, the tool contract, approvals, events, hook decisions, the execution environment,
the path policy's helpers and the errors, and the agent loop (`Agent`, with
`OpenAIProvider` or `AnthropicProvider`). Deeper modules are the implementation; their
names may move between versions, these do not.

Every name is imported on first use (PEP 562), so `import deftly` — which every
`deftly` command and every `import deftly.<module>` pays first — costs next to nothing,
and `from deftly import Tool` loads the contract, not the runtime. The names are also
imported under `TYPE_CHECKING` below, so type checkers and editors see them as usual.
"""

import typing

if typing.TYPE_CHECKING:
    from deftly.agent.agent import Agent, TurnResult
    from deftly.contract import (
        Accesses,
        AgentCallDisplay,
        AudioPart,
        BaseTool,
        CancelToken,
        CommandDisplay,
        ConfigError,
        ContentPart,
        DeftlyError,
        DiffDisplay,
        Display,
        FileIODisplay,
        GenericDisplay,
        GoalStartDisplay,
        ImagePart,
        InvalidArguments,
        PathSecurityError,
        PlanReviewDisplay,
        RuleMatch,
        SchemaTool,
        SearchDisplay,
        SkillCallDisplay,
        TaskDisplay,
        TaskStopDisplay,
        TextPart,
        TodoListDisplay,
        Tool,
        ToolContext,
        ToolDeclined,
        ToolError,
        ToolExecution,
        ToolLoadError,
        ToolResult,
        ToolTraits,
        ToolUpdate,
        UrlFetchDisplay,
        describe,
    )
    from deftly.contract.identity import MAIN_AGENT, Identity
    from deftly.env import ExecEnv, LocalEnv
    from deftly.execution import (
        AfterContext,
        AfterHook,
        Allow,
        BatchStarted,
        BeforeContext,
        BeforeHook,
        CallResult,
        Decision,
        Event,
        Outcome,
        Proceed,
        ResultBuilder,
        RuntimeNotice,
        ToolCall,
        ToolCallFinished,
        ToolCallStarted,
        ToolProgress,
        Veto,
    )
    from deftly.policy import (
        ApprovalRequest,
        ApprovalResponse,
        Approver,
        Mode,
        PathOp,
        Workspace,
        literal_rule,
        path_rule_matcher,
    )
    from deftly.providers.anthropic_messages import AnthropicProvider
    from deftly.providers.base import ChatProvider
    from deftly.providers.openai_chat import OpenAIProvider
    from deftly.registry import Profile, ToolContribution
    from deftly.runtime import Runtime, ToolInfo

__version__ = "0.1.0"

__all__ = [
    "MAIN_AGENT",
    "Accesses",
    "AfterContext",
    "AfterHook",
    "Agent",
    "AgentCallDisplay",
    "Allow",
    "AnthropicProvider",
    "ApprovalRequest",
    "ApprovalResponse",
    "Approver",
    "AudioPart",
    "BaseTool",
    "BatchStarted",
    "BeforeContext",
    "BeforeHook",
    "CallResult",
    "CancelToken",
    "ChatProvider",
    "CommandDisplay",
    "ConfigError",
    "ContentPart",
    "Decision",
    "DeftlyError",
    "DiffDisplay",
    "Display",
    "Event",
    "ExecEnv",
    "FileIODisplay",
    "GenericDisplay",
    "GoalStartDisplay",
    "Identity",
    "ImagePart",
    "InvalidArguments",
    "LocalEnv",
    "Mode",
    "OpenAIProvider",
    "Outcome",
    "PathOp",
    "PathSecurityError",
    "PlanReviewDisplay",
    "Proceed",
    "Profile",
    "ResultBuilder",
    "RuleMatch",
    "Runtime",
    "RuntimeNotice",
    "SchemaTool",
    "SearchDisplay",
    "SkillCallDisplay",
    "TaskDisplay",
    "TaskStopDisplay",
    "TextPart",
    "TodoListDisplay",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolContext",
    "ToolContribution",
    "ToolDeclined",
    "ToolError",
    "ToolExecution",
    "ToolInfo",
    "ToolLoadError",
    "ToolProgress",
    "ToolResult",
    "ToolTraits",
    "ToolUpdate",
    "TurnResult",
    "UrlFetchDisplay",
    "Veto",
    "Workspace",
    "__version__",
    "describe",
    "literal_rule",
    "path_rule_matcher",
]

_FROM: dict[str, tuple[str, ...]] = {
    "deftly.contract": (
        "Accesses",
        "AgentCallDisplay",
        "AudioPart",
        "BaseTool",
        "CancelToken",
        "CommandDisplay",
        "ConfigError",
        "ContentPart",
        "DeftlyError",
        "DiffDisplay",
        "Display",
        "FileIODisplay",
        "GenericDisplay",
        "GoalStartDisplay",
        "ImagePart",
        "InvalidArguments",
        "PathSecurityError",
        "PlanReviewDisplay",
        "RuleMatch",
        "SchemaTool",
        "SearchDisplay",
        "SkillCallDisplay",
        "TaskDisplay",
        "TaskStopDisplay",
        "TextPart",
        "TodoListDisplay",
        "Tool",
        "ToolContext",
        "ToolDeclined",
        "ToolError",
        "ToolExecution",
        "ToolLoadError",
        "ToolResult",
        "ToolTraits",
        "ToolUpdate",
        "UrlFetchDisplay",
        "describe",
    ),
    "deftly.contract.identity": ("MAIN_AGENT", "Identity"),
    "deftly.env": ("ExecEnv", "LocalEnv"),
    "deftly.execution": (
        "AfterContext",
        "AfterHook",
        "Allow",
        "BatchStarted",
        "BeforeContext",
        "BeforeHook",
        "CallResult",
        "Decision",
        "Event",
        "Outcome",
        "Proceed",
        "ResultBuilder",
        "RuntimeNotice",
        "ToolCall",
        "ToolCallFinished",
        "ToolCallStarted",
        "ToolProgress",
        "Veto",
    ),
    "deftly.policy": (
        "ApprovalRequest",
        "ApprovalResponse",
        "Approver",
        "Mode",
        "PathOp",
        "Workspace",
        "literal_rule",
        "path_rule_matcher",
    ),
    "deftly.registry": ("Profile", "ToolContribution"),
    "deftly.runtime": ("Runtime", "ToolInfo"),
    "deftly.agent.agent": ("Agent", "TurnResult"),
    "deftly.providers.base": ("ChatProvider",),
    "deftly.providers.openai_chat": ("OpenAIProvider",),
    "deftly.providers.anthropic_messages": ("AnthropicProvider",),
}
"""Where each public name lives (the same imports as the `TYPE_CHECKING` block above)."""

_HOME = {name: module for module, names in _FROM.items() for name in names}


def __getattr__(name: str) -> object:
    """Import a public name on first use and keep it, so the next lookup is a plain one."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'deftly' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
