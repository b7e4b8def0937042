"""The runtime: composition of a session scope, its agent scopes, and the features.

`Runtime` is the facade for one workspace and one main agent; `ToolInfo` is what a client
is told about one tool.
"""

from deftly.runtime.agent_runtime import AgentRuntime
from deftly.runtime.facade import Runtime
from deftly.runtime.session_runtime import SessionRuntime
from deftly.runtime.tool_info import ToolInfo

__all__ = ["AgentRuntime", "Runtime", "SessionRuntime", "ToolInfo"]
