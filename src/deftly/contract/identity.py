"""Who a call belongs to: the session, the agent in it, and the agent's turn.

Every `ToolContext` and every event carries one, so a UI (or `deftly run --json`) can tell
whose call it is when a parent and its sub-agents work in one session.
"""

from __future__ import annotations

from dataclasses import replace

from deftly.contract.records import frozen

MAIN_AGENT = "main"
"""The `agent_id` of a session's first agent."""


@frozen
class Identity:
    """Session, agent and turn of a call. `turn_id` is None outside an agent loop's turn
    (a library or `deftly call` caller runs calls without turns)."""

    session_id: str = ""
    agent_id: str = MAIN_AGENT
    turn_id: str | None = None

    def in_turn(self, turn_id: str | None) -> Identity:
        """The same session and agent, in another turn."""
        return replace(self, turn_id=turn_id)

    def for_agent(self, agent_id: str) -> Identity:
        """A child agent of the same session (no turn yet)."""
        return Identity(self.session_id, agent_id, None)
