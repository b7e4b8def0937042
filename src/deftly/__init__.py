"""deftly: a hardened tool runtime for coding agents.

A model only talks; deftly takes its tool calls and lands them, precisely and safely, on
real files and processes. Start with `Runtime`:

    from deftly import Runtime

    async with Runtime("path/to/repo", mode="manual") as rt:
        result = await rt.call("Read", {"path": "README.md"})
"""

from deftly.contract import (
    Accesses,
    BaseTool,
    CancelToken,
    ContentPart,
    Display,
    ImagePart,
    PathSecurityError,
    RuleMatch,
    SchemaTool,
    TextPart,
    Tool,
    ToolContext,
    ToolDeclined,
    ToolExecution,
    ToolResult,
    ToolTraits,
    ToolUpdate,
    describe,
)
from deftly.execution import CallResult, Outcome, ResultBuilder, ToolCall
from deftly.execution.events import RuntimeNotice, ToolCallFinished, ToolCallStarted, ToolProgress
from deftly.execution.hooks import Allow, Proceed, Veto
from deftly.policy import Workspace, literal_rule, path_rule_matcher
from deftly.policy.approval import ApprovalRequest, ApprovalResponse, Approver
from deftly.registry import Profile, ToolContribution
from deftly.runtime import Runtime, ToolInfo

__version__ = "0.1.0"

__all__ = [
    "Accesses",
    "Allow",
    "ApprovalRequest",
    "ApprovalResponse",
    "Approver",
    "BaseTool",
    "CallResult",
    "CancelToken",
    "ContentPart",
    "Display",
    "ImagePart",
    "Outcome",
    "PathSecurityError",
    "Proceed",
    "Profile",
    "ResultBuilder",
    "RuleMatch",
    "Runtime",
    "RuntimeNotice",
    "SchemaTool",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolContext",
    "ToolContribution",
    "ToolDeclined",
    "ToolExecution",
    "ToolInfo",
    "ToolProgress",
    "ToolResult",
    "ToolTraits",
    "ToolUpdate",
    "Veto",
    "Workspace",
    "__version__",
    "describe",
    "literal_rule",
    "path_rule_matcher",
]
