"""Asking a person: the `Approver` interface every front end implements.

The permission engine decides *whether* to ask; an approver decides *how*: a terminal
prompt, an MCP elicitation, a GUI dialog, or a non-interactive refusal. The request carries
what a person needs to decide (the display: a diff for an edit, the command for a shell
call); the response may approve once, approve for the rest of the session (remembering the
call's `approval_rule`), or reject with feedback for the model.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol

from deftly.contract.display import Display
from deftly.contract.records import frozen
from deftly.policy.permissions.decision import Link, PermissionDecision

Decision = Literal["approve", "approve_session", "reject"]


@frozen
class ApprovalRequest:
    """What a person is asked about one call: which tool, what it will do, how to show it (a diff, a
    command), why the engine asks, and which rules a session approval may remember."""

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
    session_rules: tuple[str, ...] = ()
    """The rules a person may choose to remember for the session: `approval_rule` first
    (the exact call), then broader ones the tool offers (`Bash(git commit *)`)."""

    @property
    def session_choices(self) -> tuple[str, ...]:
        """The rules a person may pick to remember for the session; the exact call's rule when the
        tool offers no broader one."""
        return self.session_rules or (self.approval_rule,)


@frozen
class ApprovalResponse:
    """A person's answer: approve once, approve for the session (optionally a broader `rule`), or
    reject, with feedback for the model."""

    decision: Decision
    feedback: str | None = None
    selected: str | None = None
    """The option a person picked, when the display offered some (a plan's approaches)."""
    refusal: str | None = None
    """Set when nobody could be asked: what the model is told instead of "the user
    declined" (why no one could answer, and how to allow the call)."""
    rule: str | None = None
    """With "approve_session": which of the request's `session_choices` to remember
    (None: the exact `approval_rule`)."""

    @property
    def approved(self) -> bool:
        """Whether the call may run (approved once or for the session)."""
        return self.decision != "reject"


class Approver(Protocol):
    """How a front end asks a person about a call (a terminal prompt, an MCP elicitation, a dialog);
    pass one as `Runtime(approver=...)`."""

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Ask about one call and wait for the answer; called only for calls the permission engine
        would ask about."""
        ...


class NonInteractiveApprover:
    """For when no person can be asked: every ask is refused, saying how to allow it.

    The refusal names the three ways out: `--yes` (Python: `approve_asks=True`), a mode
    (`--mode`; Python: `Runtime(mode=...)` or `rt.set_mode(...)`), or an allow rule with
    the exact rule text to add to the config.
    """

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Refuse the call, telling the model why no one could be asked and how to allow it."""
        return ApprovalResponse("reject", refusal=self.refusal(request))

    def refusal(self, request: ApprovalRequest, decision: PermissionDecision | None = None) -> str:
        """The refusal text: why the call asks (the deciding rule, when `decision` says) and the
        exact ways to allow it (`--yes`, a mode, an allow rule)."""
        link = decision.link if decision is not None else None
        lines = [
            f'Tool "{request.tool}" was not run: it needs approval, and no one can approve it '
            f"here (nothing interactive is attached). It asks because {request.reason}.",
            "To allow it:",
            "  - approve every call that asks: the --yes option (Python: approve_asks=True);",
        ]
        if link is Link.ASK_RULES and decision is not None and decision.rule is not None:
            lines.append(
                '  - or the auto mode: --mode auto (Python: Runtime(mode="auto") or '
                'rt.set_mode("auto"));'
            )
            lines.append(
                f'  - or remove the ask rule "{decision.rule.text}" ({decision.rule.origin}); '
                "an ask rule wins over allow rules and the yolo mode."
            )
            return "\n".join(lines)
        modes = "--mode auto" if link is Link.PROTECTED_PATHS else "--mode yolo or --mode auto"
        lines.append(
            f"  - or a mode that approves it: {modes} (Python: Runtime(mode=...) or "
            "rt.set_mode(...));"
        )
        lines.append(
            "  - or an allow rule in .deftly/config.toml (or ~/.config/deftly/config.toml):\n"
            f"        [permissions]\n        allow = [{toml_string(request.approval_rule)}]"
        )
        return "\n".join(lines)


def toml_string(text: str) -> str:
    """`text` as a TOML string: a literal 'string' when it can be one (no escaping needed)."""
    if "'" not in text and "\n" not in text and "\r" not in text:
        return f"'{text}'"
    return json.dumps(text)
