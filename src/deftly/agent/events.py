"""What a turn tells its watchers, as it happens: `Agent.stream()` yields these, the
terminal renders them, `deftly run --json` prints each one's `to_json()` as a line.

Every event names its agent and turn, so a UI can tell a sub-agent's call from its
parent's. Deltas (`TextDelta`, `ReasoningDelta`) are for live display; the whole text of
a step comes once more as `Text` when it is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, TypeAlias

from deftly.contract.records import frozen
from deftly.execution.calls import CallResult
from deftly.providers.types import Usage

StopReason: TypeAlias = Literal[
    "end_turn", "max_steps", "stop_turn", "budget", "error", "cancelled"
]
"""Why a turn ended: the model replied without tool calls; `--max-steps` was reached; a
tool result ended the turn; a budget ran out; the provider failed after its retries (or
refused); the user cancelled."""


@frozen
class _Event:
    agent_id: str
    turn_id: str

    def _json(self, event_type: str, **fields: Any) -> dict[str, Any]:
        return {"type": event_type, **fields, "agent_id": self.agent_id, "turn_id": self.turn_id}


@frozen
class TurnStarted(_Event):
    """A turn began with this prompt. `origin` says where a prompt nobody typed came from
    (an inbox message's origin, e.g. `{"kind": "cron_job", "job_id": ...}`); empty for a
    typed one."""

    prompt: str
    origin: Mapping[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """One `--json` line (with `origin` only when there is one)."""
        if self.origin:
            return self._json("turn_start", prompt=self.prompt, origin=dict(self.origin))
        return self._json("turn_start", prompt=self.prompt)


@frozen
class TextDelta(_Event):
    """More of the model's text, as it streams."""

    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("text_delta", text=self.text)


@frozen
class ReasoningDelta(_Event):
    """More of the model's reasoning, as it streams."""

    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("reasoning_delta", text=self.text)


@frozen
class Text(_Event):
    """A complete run of the model's text (before its tool calls, or its final answer)."""

    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("text", text=self.text)


@frozen
class Reasoning(_Event):
    """A complete run of the model's reasoning."""

    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("reasoning", text=self.text)


@frozen
class ToolCall(_Event):
    """The model called a tool (its arguments complete; it is being dispatched).
    `arguments` is the decoded object, or the raw text when it is not valid JSON."""

    id: str
    name: str
    arguments: Any

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("tool_call", id=self.id, name=self.name, arguments=self.arguments)


@frozen
class ToolProgress(_Event):
    """A running call's live output or status."""

    id: str
    name: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("tool_progress", id=self.id, name=self.name, text=self.text)


@frozen
class ToolResult(_Event):
    """A call ended; `output` is the text the model gets (images as a pointer),
    `display` the call's display as JSON for UIs (a diff, a command), if any."""

    id: str
    name: str
    is_error: bool
    output: str
    display: dict[str, Any] | None = None
    call: CallResult | None = field(default=None, compare=False, repr=False)
    """The executor's whole record (display, times, outcome), for UIs; not in the JSON."""

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        out = self._json(
            "tool_result", id=self.id, name=self.name, is_error=self.is_error, output=self.output
        )
        if self.display is not None:
            out["display"] = self.display
        return out


@frozen
class StepEnded(_Event):
    """One model request and its tool calls are done."""

    step: int
    finish_reason: str
    usage: Usage = field(default_factory=Usage)

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json(
            "step_end", step=self.step, finish_reason=self.finish_reason, usage=self.usage.to_json()
        )


@frozen
class Retrying(_Event):
    """A model request failed and will be tried again after `delay` seconds."""

    attempt: int
    delay: float
    error: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("retry", attempt=self.attempt, delay=self.delay, error=self.error)


@frozen
class ContextChanged(_Event):
    """The conversation was shortened to fit the window: old tool outputs elided
    (`kind="elided"`) or older turns compacted into a summary (`kind="compacted"`)."""

    kind: Literal["elided", "compacted"]
    tokens_before: int
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json(
            "context", kind=self.kind, tokens_before=self.tokens_before, detail=self.detail
        )


@frozen
class Notice(_Event):
    """Something the person should know (a background task ended, an approval decision)."""

    kind: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json("notice", kind=self.kind, text=self.text)


@frozen
class TurnEnded(_Event):
    """The turn is over: why, its final text, how many steps and tokens. `error` says what
    went wrong when `stop_reason` is "error"."""

    stop_reason: StopReason
    text: str
    steps: int
    usage: Usage
    session_id: str
    error: str | None = None
    usage_by_agent: Mapping[str, Usage] = field(default_factory=dict)
    """Tokens by agent when sub-agents ran in the turn: this agent's own (`usage`) and
    each sub-agent's (theirs included); empty when none ran."""

    @property
    def total_usage(self) -> Usage:
        """Tokens of the whole turn: this agent's and its sub-agents'."""
        if not self.usage_by_agent:
            return self.usage
        total = Usage()
        for usage in self.usage_by_agent.values():
            total += usage
        return total

    def to_json(self) -> dict[str, Any]:
        """One `--json` line (`usage_by_agent` and `total_usage` when sub-agents ran)."""
        out = self._json(
            "turn_end",
            stop_reason=self.stop_reason,
            text=self.text,
            steps=self.steps,
            usage=self.usage.to_json(),
            session_id=self.session_id,
        )
        if self.error is not None:
            out["error"] = self.error
        if self.usage_by_agent:
            out["usage_by_agent"] = {k: u.to_json() for k, u in self.usage_by_agent.items()}
            out["total_usage"] = self.total_usage.to_json()
        return out


@frozen
class SubagentStarted(_Event):
    """A sub-agent (`agent_id`) began a run for its parent; its calls and texts follow,
    each with its own `agent_id`, until its `SubagentEnded`. `turn_id` is the parent's."""

    parent_id: str
    profile: str
    description: str
    prompt: str
    resumed: bool = False
    background: bool = False

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        return self._json(
            "subagent_start",
            parent_id=self.parent_id,
            profile=self.profile,
            description=self.description,
            prompt=self.prompt,
            resumed=self.resumed,
            background=self.background,
        )


@frozen
class SubagentEnded(_Event):
    """A sub-agent's run ended: how (`status`: completed, failed, cancelled, timed_out),
    its final text, and its tokens (`usage_by_agent`: its own and its sub-agents')."""

    parent_id: str
    profile: str
    status: str
    text: str
    usage_by_agent: Mapping[str, Usage] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """One `--json` line."""
        out = self._json(
            "subagent_end",
            parent_id=self.parent_id,
            profile=self.profile,
            status=self.status,
            text=self.text,
            usage_by_agent={k: u.to_json() for k, u in self.usage_by_agent.items()},
        )
        if self.error is not None:
            out["error"] = self.error
        return out


AgentEvent: TypeAlias = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | Text
    | Reasoning
    | ToolCall
    | ToolProgress
    | ToolResult
    | StepEnded
    | Retrying
    | ContextChanged
    | Notice
    | SubagentStarted
    | SubagentEnded
    | TurnEnded
)
