"""Sub-agents as plain data: who a child is, what it is asked, how it ended, who runs it.

The Agent and AgentSwarm tools (features) describe a child with a `ChildSpec` and hand it
to the agent's `SubagentDesk`; the desk passes it to a `ChildBackend`, installed by
whatever drives the agent with a model (the agent loop: `deftly.agent`), which runs the
child and answers with a `ChildOutcome`. Specs and outcomes are plain, picklable data (no
runtime objects), so a backend may run children in this process (asyncio) or on other
machines (the scale-out issue) without the tools knowing.

Profiles (`AgentProfile`: built-in `coder`, `explore`, `plan`, and the Markdown files of
`.deftly/agents/`) live on the desk too, so both tools read the same catalogue. Tools that
hand work to children (`ToolTraits(delegates=True)`) are offered only while the desk has a
backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Literal, Protocol, TypeAlias

from deftly.contract.records import frozen
from deftly.contract.tool import CancelToken

ChildStatus: TypeAlias = Literal["completed", "failed", "cancelled", "timed_out"]
"""How a child's run ended: its model ended the turn; it failed (a provider error, a step
limit, a budget); it was stopped; it ran out of time."""


@frozen
class AgentProfile:
    """A kind of sub-agent: its tools (None: all its parent has), the tools it must not
    have, its model (None: the parent's), and instructions added to its system prompt."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    instructions: str = ""
    source: str = "builtin"
    """Where it was defined: "builtin", or the path of its Markdown file."""


@frozen
class ChildSpec:
    """One child run: everything a backend needs, as plain data."""

    agent_id: str
    """The child's id in the session (a resumed child keeps its id)."""
    parent_id: str
    profile: AgentProfile
    prompt: str
    description: str = ""
    resume: bool = False
    """Continue the child's earlier conversation (its transcript) instead of starting."""
    session_id: str = ""
    workspace: str = ""
    """The workspace's root as the parent sees it (a backend elsewhere maps it)."""
    timeout: float | None = None
    """Seconds the run may take (None: no limit)."""
    item: str | None = None
    """The swarm item this child works on, if any."""
    settings: Mapping[str, object] = field(default_factory=dict)
    """Anything else a backend needs to know (max steps, the model's settings)."""


@frozen
class ChildOutcome:
    """How one child's run went: its final text, why it stopped, what it cost, and where
    its conversation is kept (so it can be resumed)."""

    agent_id: str
    profile: str
    status: ChildStatus
    text: str = ""
    error: str | None = None
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    transcript: str | None = None
    """The path of the child's transcript, when it has one."""

    @property
    def ok(self) -> bool:
        """Whether the child finished its task."""
        return self.status == "completed"


class ChildBackend(Protocol):
    """Runs sub-agents. The local backend runs them in this process; others may not."""

    async def run(self, spec: ChildSpec, cancel: CancelToken) -> ChildOutcome:
        """Run the child to the end of one turn (or until `cancel`), never raising for
        the child's own failures: they are the outcome's `status` and `error`."""
        ...

    def is_running(self, agent_id: str) -> bool:
        """Whether a child with this id is running now (a resume must wait)."""
        ...

    def known(self, agent_id: str) -> bool:
        """Whether a child with this id ran in this session (so it can be resumed)."""
        ...


def spoken_duration(seconds: float) -> str:
    """A time limit as a model reads it: `2 hours`, `1 hour`, `5 minutes`, `30s`, `1.5s`."""
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return f"{hours} hour{'s' if hours != 1 else ''}"
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g}s"


class SubagentDesk:
    """One agent's way to its children: the profiles it may use and the backend that runs
    them (None until an agent loop installs one)."""

    def __init__(self, backend: ChildBackend | None = None) -> None:
        self.backend = backend
        self.profiles: dict[str, AgentProfile] = {}

    @property
    def available(self) -> bool:
        """Whether children can run here."""
        return self.backend is not None

    def profile(self, name: str) -> AgentProfile | None:
        """The profile called `name`, if there is one."""
        return self.profiles.get(name)
