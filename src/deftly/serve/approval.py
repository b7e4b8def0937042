"""Asking an MCP client's user: the `Approver` that `deftly serve` installs.

When the permission engine says *ask* for a call that arrived over MCP, the question goes
to the client's user as an MCP elicitation (a small form: allow once, allow for the
session, reject, plus an optional note for the model). A client that cannot show forms gets
a refusal that says how to allow such calls instead: a `--mode` or an allow rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import mcp.types as mt

from deftly.contract.display import (
    CommandDisplay,
    DiffDisplay,
    Display,
    FileIODisplay,
    GenericDisplay,
    replacement_text,
    unified_diff,
)
from deftly.policy.approval import ApprovalRequest, ApprovalResponse

MAX_SHOWN_CHARS = 4_000

DECISIONS = ("approve", "approve_session", "reject")

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Allow this call?",
            "oneOf": [
                {"const": "approve", "title": "Allow once"},
                {"const": "approve_session", "title": "Allow for the rest of this session"},
                {"const": "reject", "title": "Reject"},
            ],
        },
        "feedback": {
            "type": "string",
            "title": "Note for the model (optional)",
            "description": "Why you rejected it, or what to do instead.",
        },
    },
    "required": ["decision"],
}


class Asker(Protocol):
    """One MCP call's way back to its client."""

    @property
    def can_elicit(self) -> bool:
        """Whether the client can ask its user (it supports form elicitation)."""
        ...

    async def elicit(
        self, message: str, schema: dict[str, Any], patience: float
    ) -> mt.ElicitResult | None:
        """The user's answer, or None when nobody answered within `patience` seconds
        (or the call was cancelled)."""


def _cut(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more)"


def display_text(display: Display | None) -> str:
    """A display as plain text, for a form shown by a client we know nothing about."""
    match display:
        case None:
            return ""
        case CommandDisplay(command=command, cwd=cwd, description=description):
            said = f"{description}\n" if description else ""
            return f"{said}$ {command}" + (f"\n(in {cwd})" if cwd else "")
        case FileIODisplay(operation="edit", path=path, before=before, after=after) if (
            before is not None and after is not None
        ):
            return replacement_text(path, before, after)
        case DiffDisplay(path=path, before=before, after=after, new_file=new_file):
            diff = unified_diff(path, before, after, new_file=new_file) or "(no change)"
            return f"new file {path}\n{diff}" if new_file else diff
        case FileIODisplay(operation="write", path=path, content=content) if content is not None:
            return f"write {path}:\n{content}"
        case FileIODisplay(operation=operation, path=path, detail=detail):
            return f"{operation} {path}" + (f" ({detail})" if detail else "")
        case GenericDisplay(summary=summary, detail=detail):
            if detail is None:
                return summary
            return f"{summary}\n{json.dumps(detail, indent=2, default=str, ensure_ascii=False)}"
        case _:
            return json.dumps(display.model_dump(exclude_none=True), default=str, indent=2)


BROADER = "approve_rule_"
"""The decision value of the n-th broader session rule offered: `approve_rule_1`..."""


def approval_schema(request: ApprovalRequest) -> dict[str, Any]:
    """The form for one request: allow once, allow for the session (the exact call, or
    each broader rule the tool offers, the person choosing), reject."""
    choices = request.session_choices
    if len(choices) < 2:
        return APPROVAL_SCHEMA
    options = [
        {"const": "approve", "title": "Allow once"},
        {"const": "approve_session", "title": f"Allow {choices[0]} for the rest of this session"},
        *(
            {"const": f"{BROADER}{n}", "title": f"Allow {rule} for the rest of this session"}
            for n, rule in enumerate(choices[1:], 1)
        ),
        {"const": "reject", "title": "Reject"},
    ]
    decision = {**APPROVAL_SCHEMA["properties"]["decision"], "oneOf": options}
    return {
        **APPROVAL_SCHEMA,
        "properties": {**APPROVAL_SCHEMA["properties"], "decision": decision},
    }


def question(request: ApprovalRequest) -> str:
    """The text put to the client's user: the tool, what it will do, what will happen (a diff, a
    command), why deftly asks, and what a session approval would allow."""
    parts = [f"deftly: allow {request.tool}?", request.action]
    shown = display_text(request.display)
    if shown:
        parts.append(_cut(shown))
    parts.append(f"Asked because: {request.reason}")
    choices = request.session_choices
    if len(choices) < 2:
        parts.append(
            '"Allow for the rest of this session" also allows later calls matching '
            f"{request.approval_rule}."
        )
    else:
        parts.append(
            "Allowing for the rest of this session also allows later calls matching the rule "
            f"you choose: {' or '.join(choices)}."
        )
    return "\n\n".join(p for p in parts if p)


def how_to_allow(request: ApprovalRequest, workspace: Path | None) -> str:
    """How to allow such calls without being asked, for a refusal: `--mode auto`, or the exact allow
    rule to add to the workspace's config."""
    config = f"{workspace}/.deftly/config.toml" if workspace else ".deftly/config.toml"
    return (
        f"To allow calls like this, restart `deftly serve` with `--mode auto` (approves "
        f"everything no deny rule forbids), or add an allow rule such as "
        f'"{request.approval_rule}" to `[permissions] allow` in {config}.'
    )


class ElicitationApprover:
    """Asks the user of the MCP client that made the call; refuses when it cannot."""

    def __init__(self, *, timeout: float = 600.0, workspace: Path | None = None) -> None:
        self.timeout = timeout
        self.workspace = workspace
        self._find: Callable[[str], Asker | None] = lambda call_id: None

    def bind(self, find: Callable[[str], Asker | None]) -> None:
        """Where to find the MCP call a request belongs to (by deftly call id)."""
        self._find = find

    def _refuse(self, request: ApprovalRequest, why: str) -> ApprovalResponse:
        return ApprovalResponse(
            "reject",
            refusal=(
                f'"{request.tool}" needs approval ({request.reason}), and {why}, so the call '
                f"was not run. {how_to_allow(request, self.workspace)} Tell the user this; "
                "do not retry the call until they have allowed it."
            ),
        )

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Ask the user of the MCP client the call came from, through elicitation; refuse, saying
        how to allow the call, when the client cannot ask or nobody answers in time."""
        asker = self._find(request.call_id)
        if asker is None:
            return self._refuse(request, "it did not come from an MCP call that could be asked")
        if not asker.can_elicit:
            return self._refuse(
                request,
                "this MCP client cannot ask its user (it does not support elicitation)",
            )
        answer = await asker.elicit(question(request), approval_schema(request), self.timeout)
        if answer is None:
            return self._refuse(request, f"nobody answered within {self.timeout:g} s")
        content = answer.content or {}
        note = content.get("feedback")
        feedback = note.strip() if isinstance(note, str) and note.strip() else None
        decision = content.get("decision")
        choices = request.session_choices
        if answer.action == "accept" and isinstance(decision, str) and decision.startswith(BROADER):
            number = decision.removeprefix(BROADER)
            if number.isdigit() and 1 <= int(number) < len(choices):
                return ApprovalResponse("approve_session", rule=choices[int(number)])
            return ApprovalResponse("reject", feedback=feedback)
        if answer.action != "accept" or decision not in DECISIONS or decision == "reject":
            return ApprovalResponse("reject", feedback=feedback)
        return ApprovalResponse("approve_session" if decision == "approve_session" else "approve")
