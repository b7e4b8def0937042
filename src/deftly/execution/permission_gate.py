"""The permission gate: the engine's decision, acted on, as two before-hooks.

`check` runs first in the chain (`HookOrder.PERMISSION_CHECK`) and vetoes what a deny rule
forbids, before plan mode, external hooks or anyone else see the call. `confirm` runs last
(`HookOrder.APPROVAL`) and decides again (a "yes, for this session" given for an earlier
call of the same batch counts): approve, deny, or ask a person through the `Approver`.
Asking last means nobody is asked about a call that a later check would refuse anyway.

Every decision is announced as a `RuntimeNotice` of kind "permission" whose `data` is a
`PermissionRecord` (the decision, explainable link by link, and how an ask was resolved).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from deftly.contract.display import Display, GenericDisplay
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.execution.executor import cancelled_text
from deftly.execution.hooks import BeforeContext, BeforeHook, HookChain, HookOrder, Proceed, Veto
from deftly.policy.approval import (
    ApprovalRequest,
    ApprovalResponse,
    Approver,
    NonInteractiveApprover,
)
from deftly.policy.permissions import PermissionDecision, PermissionEngine, Verdict

log = logging.getLogger(__name__)

Via = Literal["approve_asks", "person", "non_interactive", "cancelled", "error", "grant"]
Grant = Callable[[BeforeContext], "str | None"]
"""Approves an *ask* (never a deny) for a reason of its own, e.g. plan mode approving writes
to the plan file. Returns that reason, or None."""

NOTICE_KIND = "permission"


@frozen
class Answer:
    """How an ask was resolved."""

    response: ApprovalResponse
    via: Via
    message: str | None = None
    """The text for the model when the call is not run (a refusal, a cancellation...)."""
    request: ApprovalRequest | None = None
    """What the person was shown (with the rules offered for the session)."""


@frozen
class PermissionRecord:
    """What the gate decided for one call: the `data` of a "permission" RuntimeNotice."""

    call_id: str
    decision: PermissionDecision
    resolution: str
    """approved / denied / asked: approved by a person (once or for the session), declined,
    refused (nobody to ask), approved by approve_asks, approved by a grant."""

    def explain(self) -> str:
        """The decision's story, link by link, and what came of the call."""
        return f"{self.decision.explain()}\n  result: {self.resolution}"

    def to_json(self) -> dict[str, Any]:
        """The record as JSON (`--explain --json`): the call id, what came of it and the
        decision."""
        return {"call_id": self.call_id, "resolution": self.resolution, **self.decision.to_json()}


class PermissionGate:
    """Acts on the engine's decisions; asks through `approver` (None: nobody can be asked)."""

    def __init__(
        self,
        engine: PermissionEngine,
        events: EventBus,
        *,
        approver: Approver | None = None,
        approve_asks: bool = False,
    ) -> None:
        self.engine = engine
        self.events = events
        self.approver: Approver = approver or NonInteractiveApprover()
        self.approve_asks = approve_asks
        self.grants: list[Grant] = []
        self._checked: tuple[object, int] | None = None
        """The call `check` just cleared of deny rules, and the rules' version then: calls
        are prepared one at a time, so `confirm` for the same call need not match them
        again unless the rules changed in between."""

    def install(self, chain: HookChain[BeforeHook]) -> Callable[[], None]:
        """Add the gate's two before-hooks to the chain (deny rules first, the approval last);
        returns the function that removes both."""
        remove_check = chain.add("permissions.deny", self.check, order=HookOrder.PERMISSION_CHECK)
        remove_confirm = chain.add("permissions", self.confirm, order=HookOrder.APPROVAL)

        def remove() -> None:
            remove_check()
            remove_confirm()

        return remove

    def decide(self, ctx: BeforeContext) -> PermissionDecision:
        """The engine's decision for the call, skipping the deny rules when `check` just cleared
        this call under the same rules."""
        checked = self._checked
        self._checked = None
        deny_checked = (
            checked is not None
            and checked[0] is ctx.execution
            and checked[1] == self.engine.rules.version
        )
        return self.engine.decide(
            ctx.call.name, ctx.execution, ctx.tool.traits, deny_checked=deny_checked
        )

    # -- the two hooks -------------------------------------------------------------------

    async def check(self, ctx: BeforeContext) -> Veto | None:
        """First before-hook: veto a call a deny rule forbids, before any other hook runs."""
        self._checked = None
        decision = self.engine.denial(ctx.call.name, ctx.execution, ctx.tool.traits)
        if decision is None:
            self._checked = (ctx.execution, self.engine.rules.version)
            return None
        self._announce(ctx, decision, "denied")
        return Veto(ToolResult.error(deny_text(decision)))

    async def confirm(self, ctx: BeforeContext) -> Veto | Proceed:
        """Last before-hook: approve, refuse, or ask a person (through the approver) and act on the
        answer, remembering a session approval."""
        decision = self.decide(ctx)
        if decision.verdict is Verdict.DENY:
            self._announce(ctx, decision, "denied")
            return Veto(ToolResult.error(deny_text(decision)))
        if decision.verdict is Verdict.APPROVE:
            self._announce(ctx, decision, "approved")
            return Proceed()
        for grant in self.grants:
            reason = grant(ctx)
            if reason:
                self._announce(ctx, decision, f"asked, and approved without asking: {reason}")
                return Proceed()
        answer = await self.ask(ctx, self.request_for(ctx, decision), decision)
        response = answer.response
        if response.decision == "approve_session":
            rule = _remembered(answer.request, response, ctx.execution.approval_rule)
            self.engine.session.add(rule)
            self._announce(
                ctx, decision, f'asked: approved for this session (remembering "{rule}")'
            )
            return Proceed()
        if response.approved:
            how = "approved by approve_asks (--yes)" if answer.via == "approve_asks" else "approved"
            self._announce(ctx, decision, f"asked: {how}")
            return Proceed()
        self._announce(ctx, decision, f"asked: {_refusal_label(answer.via)}")
        return Veto(ToolResult.error(answer.message or declined_text(ctx, response)))

    # -- asking --------------------------------------------------------------------------

    def request_for(self, ctx: BeforeContext, decision: PermissionDecision) -> ApprovalRequest:
        """The approval request for the call: what it will do, its display (or its arguments), why
        the engine asks, and the rules a session approval may remember."""
        execution = ctx.execution
        action = execution.description or f"Run {ctx.call.name}"
        display: Display = execution.display or GenericDisplay(
            summary=action, detail=_plain(ctx.args)
        )
        return ApprovalRequest(
            call_id=ctx.call.id,
            tool=ctx.call.name,
            action=action,
            args=_plain(ctx.args),
            display=display,
            approval_rule=execution.approval_rule,
            reason=decision.reason,
            session_rules=(execution.approval_rule,),
        )

    async def _for_a_person(self, ctx: BeforeContext, request: ApprovalRequest) -> ApprovalRequest:
        """The request with what only a person needs, worked out now that one is asked:
        the tool's preview (an edit's real diff: it reads the file) and the broader rules
        they may remember for the session."""
        execution = ctx.execution
        display = request.display
        if execution.preview is not None:
            try:
                display = await asyncio.to_thread(execution.preview) or display
            except Exception:
                log.debug("preview failed for %s", ctx.call.name, exc_info=True)
        rules = [execution.approval_rule]
        if execution.session_rules is not None:
            try:
                rules += [r for r in execution.session_rules() if r not in rules]
            except Exception:
                log.debug("session rules failed for %s", ctx.call.name, exc_info=True)
        return dataclasses.replace(request, display=display, session_rules=tuple(rules))

    async def ask(
        self,
        ctx: BeforeContext,
        request: ApprovalRequest,
        decision: PermissionDecision | None = None,
    ) -> Answer:
        """Ask whoever can be asked; never raises, and gives up when the batch is cancelled."""
        if self.approve_asks:
            return Answer(ApprovalResponse("approve"), "approve_asks")
        approver = self.approver
        if isinstance(approver, NonInteractiveApprover):
            message = approver.refusal(request, decision)
            return Answer(ApprovalResponse("reject", refusal=message), "non_interactive", message)
        request = await self._for_a_person(ctx, request)
        try:
            asking: asyncio.Future[Any] = asyncio.ensure_future(approver.request(request))
        except Exception as exc:  # a synchronous failure, or not a coroutine at all
            return self._failed(ctx, exc)
        cancelled = asyncio.ensure_future(ctx.cancel.wait())
        try:
            await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not asking.done():
                asking.cancel()
                with contextlib.suppress(BaseException):
                    await asking
        if asking.cancelled() or ctx.cancel.cancelled:
            message = cancelled_text(ctx.call.name, ctx.cancel)
            return Answer(ApprovalResponse("reject"), "cancelled", message)
        error = asking.exception()
        if error is not None:
            return self._failed(ctx, error)
        response: Any = asking.result()
        if not isinstance(response, ApprovalResponse):
            message = (
                f'Tool "{ctx.call.name}" was not run: the approver gave no answer '
                f"(it returned {type(response).__name__})."
            )
            return Answer(ApprovalResponse("reject"), "error", message)
        if response.refusal:
            return Answer(response, "non_interactive", response.refusal, request)
        return Answer(response, "person", request=request)

    def _failed(self, ctx: BeforeContext, error: BaseException) -> Answer:
        log.warning("approver failed for %s", ctx.call.name, exc_info=error)
        message = (
            f'Tool "{ctx.call.name}" was not run: asking for approval failed '
            f"({type(error).__name__}: {error})."
        )
        return Answer(ApprovalResponse("reject"), "error", message)

    def _announce(self, ctx: BeforeContext, decision: PermissionDecision, resolution: str) -> None:
        record = PermissionRecord(ctx.call.id, decision, resolution)
        log.debug("permission for %s: %s -> %s", ctx.call.id, decision.reason, resolution)
        self.events.emit(
            RuntimeNotice(
                NOTICE_KIND,
                lambda: f"{decision.summary()} -> {resolution}",
                record,
                ctx.identity,
            )
        )


def deny_text(decision: PermissionDecision) -> str:
    """What the model is told of a denied call: which rule denied it, and not to work around it."""
    rule = decision.rule
    where = f'the permission rule "{rule.text}" ({rule.origin})' if rule else "the permissions"
    return (
        f'Tool "{decision.tool}" was denied by {where}. This is a rule of this workspace, not '
        "an error: do not retry the call or try to work around it; take a different approach "
        "or ask the user."
    )


def declined_text(ctx: BeforeContext, response: ApprovalResponse) -> str:
    """What the model is told when a person declined the call, with their feedback if they gave
    any."""
    action = ctx.execution.description
    head = f'The user declined to run "{ctx.call.name}"' + (f" ({action})" if action else "")
    feedback = (response.feedback or "").strip()
    if feedback:
        return (
            f"{head}. Their feedback: {feedback}\n"
            "Do not retry the same call; adjust your approach to the feedback."
        )
    return (
        f"{head}. Do not retry the same call: think about why they declined, then take another "
        "approach or ask the user what they would prefer."
    )


def _remembered(request: ApprovalRequest | None, response: ApprovalResponse, exact: str) -> str:
    """The rule a "yes, for this session" remembers: the one the person chose, if it was
    offered, else the exact call's."""
    if request is not None and response.rule in request.session_choices:
        return response.rule
    return exact


def _refusal_label(via: Via) -> str:
    return {
        "person": "declined by the user",
        "non_interactive": "refused: nobody can be asked (non-interactive)",
        "cancelled": "cancelled while asking",
        "error": "refused: the approver failed",
    }.get(via, "refused")


def _plain(args: Any) -> Any:
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json")
    return args
