"""What the agent loop drives: one agent scope, seen the way the loop needs it.

`Agent` drives a `Runtime`'s main agent or a sub-agent's scope through the same loop; both
look like a `DrivenScope`. A `Runtime` is one as it is; `ChildScope` makes a child
`AgentRuntime` (from `spawn_child`) one, so the loop is never copied for sub-agents.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from deftly.config.model import DeftlyConfig
from deftly.execution.events import EventListener
from deftly.features.disclosure.disclosure import DeferredTools, ModelTools
from deftly.policy.paths import Workspace
from deftly.runtime.agent_runtime import AgentRuntime
from deftly.runtime.session_runtime import SessionRuntime
from deftly.runtime.tool_info import ToolInfo


class DrivenScope(Protocol):
    """One agent of a session with what its loop reads: its scope, the session's, the
    configuration, where the session keeps its files, and the tools it offers now."""

    @property
    def agent(self) -> AgentRuntime:
        """The agent scope the loop drives."""
        ...

    @property
    def session(self) -> SessionRuntime:
        """The session scope it belongs to."""
        ...

    @property
    def config(self) -> DeftlyConfig:
        """The configuration in effect."""
        ...

    @property
    def session_id(self) -> str:
        """The session's id."""
        ...

    @property
    def session_dir(self) -> Path:
        """The session's directory (transcripts, spill files, state)."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The workspace's path policy."""
        ...

    async def start(self) -> None:
        """Make sure the scope is started."""
        ...

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Hear every event of the session; returns the way to stop."""
        ...

    def tools(self) -> list[ToolInfo]:
        """The tools the agent offers now."""
        ...

    def model_tools(self) -> ModelTools[ToolInfo]:
        """The tools for the next model request, and the deferred-tool announcement."""
        ...


class ChildScope:
    """A started sub-agent scope as the loop drives it (it is started and closed by its
    parent scope, so `start` only checks)."""

    def __init__(self, agent: AgentRuntime) -> None:
        self._agent = agent

    @property
    def agent(self) -> AgentRuntime:
        """The child's scope."""
        return self._agent

    @property
    def session(self) -> SessionRuntime:
        """The session the child shares with its parent."""
        return self._agent.session

    @property
    def config(self) -> DeftlyConfig:
        """The session's configuration."""
        return self._agent.session.config

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._agent.session.session_id

    @property
    def session_dir(self) -> Path:
        """The session's directory."""
        return self._agent.session.session_dir

    @property
    def workspace(self) -> Workspace:
        """The workspace's path policy."""
        return self._agent.session.workspace

    async def start(self) -> None:
        """Nothing to start (the parent did); an error when the scope was closed."""
        if not self._agent.started:
            raise RuntimeError(f'the sub-agent "{self._agent.agent_id}" scope is closed')

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Hear every event of the session."""
        return self._agent.session.events.subscribe(listener)

    def tools(self) -> list[ToolInfo]:
        """The child's offered tools, sorted by name."""
        return [
            ToolInfo(e.name, e.tool.description, e.tool.parameters, e.source, e.disclosure)
            for e in self._agent.offered()
        ]

    def model_tools(self) -> ModelTools[ToolInfo]:
        """The child's tools for its next request (its own deferred tools shaped)."""
        deferred = self._agent.services.find(DeferredTools)
        if deferred is None:
            return ModelTools(self.tools(), None)
        return deferred.shape(self.tools(), lambda info: info.name)
