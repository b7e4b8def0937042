"""The tool contract: what a tool is, what a call resolves to, what it returns.

This package imports nothing else of deftly; everything else imports it.
"""

from deftly.contract.accesses import Access, Accesses, AllAccess, FileAccess, Operation, WriteHow
from deftly.contract.describe import describe, render_template
from deftly.contract.display import (
    AgentCallDisplay,
    CommandDisplay,
    DiffDisplay,
    Display,
    FileIODisplay,
    GenericDisplay,
    GoalStartDisplay,
    PlanReviewDisplay,
    SearchDisplay,
    SkillCallDisplay,
    TaskDisplay,
    TaskStopDisplay,
    TodoListDisplay,
    UrlFetchDisplay,
)
from deftly.contract.errors import (
    ConfigError,
    DeftlyError,
    InvalidArguments,
    PathSecurityError,
    ToolDeclined,
    ToolError,
    ToolLoadError,
)
from deftly.contract.identity import MAIN_AGENT, Identity
from deftly.contract.result import AudioPart, ContentPart, ImagePart, TextPart, ToolResult
from deftly.contract.schema import input_json_schema
from deftly.contract.tool import (
    BaseTool,
    CancelToken,
    Resolution,
    RuleMatch,
    SchemaTool,
    Tool,
    ToolContext,
    ToolExecution,
    ToolTraits,
    ToolUpdate,
    tool_title,
)

__all__ = [
    "MAIN_AGENT",
    "Access",
    "Accesses",
    "AgentCallDisplay",
    "AllAccess",
    "AudioPart",
    "BaseTool",
    "CancelToken",
    "CommandDisplay",
    "ConfigError",
    "ContentPart",
    "DeftlyError",
    "DiffDisplay",
    "Display",
    "FileAccess",
    "FileIODisplay",
    "GenericDisplay",
    "GoalStartDisplay",
    "Identity",
    "ImagePart",
    "InvalidArguments",
    "Operation",
    "PathSecurityError",
    "PlanReviewDisplay",
    "Resolution",
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
    "WriteHow",
    "describe",
    "input_json_schema",
    "render_template",
    "tool_title",
]
