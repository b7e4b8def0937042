"""Asking a person: the `Approver` interface every front end implements.

The permission engine decides *whether* to ask; an approver decides *how*: a terminal
prompt, an MCP elicitation, a GUI dialog, or a non-interactive refusal. The request carries
what a person needs to decide (the display: a diff for an edit, the command for a shell
call); the response may approve once, approve for the rest of the session (remembering the
call's `approval_rule`), or reject with feedback for the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from deftly.contract.display import Display

Decision = Literal["approve", "approve_session", "reject"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    call_id: str
    tool: str
    action: str
    """Short text: what the call will do ("Editing src/app.py")."""
    args: Any
    display: Display | None
    approval_rule: str
    """The rule "approve for this session" would remember."""
    reason: str
    """Why the engine asks (which link of the chain decided)."""


@dataclass(frozen=True, slots=True)
class ApprovalResponse:
    decision: Decision
    feedback: str | None = None

    @property
    def approved(self) -> bool:
        return self.decision != "reject"


class Approver(Protocol):
    async def request(self, request: ApprovalRequest) -> ApprovalResponse: ...
