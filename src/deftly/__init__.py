"""deftly: a hardened tool runtime for coding agents.

A model only talks; deftly takes its tool calls and lands them, precisely and safely, on
real files and processes. Start with `Runtime`:

    from deftly import Runtime

    async with Runtime("path/to/repo", mode="manual") as rt:
        result = await rt.call("Read", {"path": "README.md"})

Everything a user of the library or a tool writer needs is importable from here: the
runtime, the tool contract, approvals, events, hook decisions, the execution environment,
the path policy's helpers and the errors, and the agent loop (`Agent`, with
`OpenAIProvider` or `AnthropicProvider`, imported on first use). Deeper modules are the
implementation; their names may move between versions, these do not. Importing `deftly`
loads neither the MCP SDK, the model SDKs, nor the command line's libraries.
"""

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


_LAZY = {
    "Agent": ("deftly.agent.agent", "Agent"),
    "TurnResult": ("deftly.agent.agent", "TurnResult"),
    "ChatProvider": ("deftly.providers.base", "ChatProvider"),
    "OpenAIProvider": ("deftly.providers.openai_chat", "OpenAIProvider"),
    "AnthropicProvider": ("deftly.providers.anthropic_messages", "AnthropicProvider"),
}
"""The agent loop and the providers, imported on first use (`import deftly` stays light)."""


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'deftly' has no attribute {name!r}")
