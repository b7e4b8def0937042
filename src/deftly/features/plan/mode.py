"""Plan mode: its state (a runtime service) and its guard (a before-hook).

While plan mode is on, the model investigates and writes a plan instead of changing things:
a tool that writes files (trait `writes_files`: Write, Edit) may only write the plan file,
and a tool that stops background tasks (`stops_tasks`) or schedules work (`schedules_work`:
cron) is refused. A call that declares it can be proven read-only or not (a shell command,
through `ToolExecution.not_read_only`) runs as usual when it only reads; otherwise it asks,
in yolo mode too, and in auto mode it is refused. Everything else follows the normal
permissions. A tool that ends plan mode (`exits_plan_mode`: ExitPlanMode) shows the plan
to the user for approval (display `plan_review`) and plan mode ends only when they approve
it; in auto mode it ends without review, and the model is told so.

The guard decides by the traits the called tool declares, never by its name; a tool whose
traits cannot be read is refused while planning (fail closed).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from deftly.contract.accesses import path_key
from deftly.contract.display import GenericDisplay, PlanReviewDisplay
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.tool import ToolExecution
from deftly.contract.traits import traits_of
from deftly.execution.hooks import BeforeContext, Decision, Proceed, Veto
from deftly.execution.permission_gate import Answer, declined_text
from deftly.policy.approval import ApprovalRequest


class PlanMode:
    """Whether plan mode is on, and the plan file of the current plan."""

    def __init__(self, plans_dir: Path) -> None:
        self.plans_dir = plans_dir
        self.plan_path: Path | None = None
        self._active = False
        self._numbers = itertools.count(1)
        self._listeners: list[Callable[[bool], None]] = []

    @property
    def active(self) -> bool:
        """Whether plan mode is on."""
        return self._active

    def enter(self) -> Path:
        """Turn plan mode on with a fresh plan file (not created yet); returns its path."""
        if self._active and self.plan_path is not None:
            return self.plan_path
        self.plan_path = self.plans_dir / f"plan-{next(self._numbers)}.md"
        self._set(True)
        return self.plan_path

    def exit(self) -> None:
        """Turn plan mode off; the plan file stays where it is."""
        self._set(False)

    def on_change(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call `listener(active)` whenever plan mode turns on or off; returns the
        function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def writes_only_the_plan(self, execution: ToolExecution) -> bool:
        """Does this call write, and only to the plan file?"""
        if self.plan_path is None or execution.accesses is None:
            return False
        written = execution.accesses.written_paths
        if not written or execution.accesses.is_exclusive:
            return False
        return all(path_key(p) == path_key(self.plan_path) for p in written)

    def _set(self, active: bool) -> None:
        changed = active != self._active
        self._active = active
        if changed:
            for listener in tuple(self._listeners):
                listener(active)


@frozen
class PlanReview:
    """What the guard hands `ExitPlanMode.execute` (`Proceed(review)`; read there with
    `ctx.handoff(PlanReview)`)."""

    reviewed: bool
    """True when a person approved the plan; False when it ended without review."""
    how: str
    """Who or what ended the review ("the user", "auto mode", "approve_asks (--yes)")."""
    selected: str | None = None
    """The label of the approach the user picked among the plan's options, if any."""


class Asker(Protocol):
    """Asks whoever can be asked (the permission gate implements this)."""

    async def ask(self, ctx: BeforeContext, request: ApprovalRequest) -> Answer:
        """Ask about `request` for the call in `ctx`; the answer says who answered and how."""
        ...


class PlanGuard:
    """The before-hook that enforces plan mode and runs the plan review."""

    def __init__(self, state: PlanMode, asker: Asker, mode: Callable[[], str]) -> None:
        self.state = state
        self.asker = asker
        self.mode = mode
        self._approved: set[str] = set()
        """Calls a person approved here, so the permission gate does not ask again."""

    async def __call__(self, ctx: BeforeContext) -> Decision:
        """Refuse, ask about or review the call while plan mode is on; None lets it on."""
        if not self.state.active:
            return None
        name = ctx.call.name
        traits = traits_of(ctx.tool)
        if traits is None:
            return Veto(
                ToolResult.error(
                    f"Plan mode is on, and {name} does not declare what it does (its traits), "
                    "so it cannot be told apart from a tool that changes things. Call "
                    "ExitPlanMode first to get your plan approved."
                )
            )
        if traits.writes_files:
            if self.state.writes_only_the_plan(ctx.execution):
                return None
            return Veto(
                ToolResult.error(
                    f"Plan mode is on: {name} may only write the plan file, "
                    f"{self.state.plan_path}. Write your plan there, and call ExitPlanMode to "
                    "get it approved before you change other files."
                )
            )
        if traits.stops_tasks:
            return Veto(
                ToolResult.error(
                    f"{name} is not available in plan mode. Call ExitPlanMode first if a "
                    "background task really has to be stopped."
                )
            )
        if traits.schedules_work:
            return Veto(
                ToolResult.error(
                    f"{name} is not available in plan mode: it would change scheduled work that "
                    "runs after planning. Call ExitPlanMode first."
                )
            )
        if traits.exits_plan_mode:
            return await self._review(ctx)
        proof = ctx.execution.not_read_only
        if proof is not None and not traits.read_only:
            change = proof()
            if change is not None:
                return await self._may_change(ctx, change)
        return None

    async def _may_change(self, ctx: BeforeContext, change: str) -> Decision:
        """A call that may change something while planning: ask (refused in auto mode)."""
        name = ctx.call.name
        if str(self.mode()) == "auto":
            return Veto(
                ToolResult.error(
                    f"Plan mode is on: this {name} call may change things ({change}), and "
                    "while planning only calls that only read run. Investigate with read-only "
                    f"commands, write your plan to {self.state.plan_path}, and call "
                    "ExitPlanMode to get it approved before you change anything."
                )
            )
        execution = ctx.execution
        action = execution.description or f"Run {name}"
        request = ApprovalRequest(
            call_id=ctx.call.id,
            tool=name,
            action=action,
            args=_plain(ctx.args),
            display=execution.display or GenericDisplay(summary=action),
            approval_rule=execution.approval_rule,
            reason=f"plan mode is on and this call may change things ({change})",
        )
        answer = await self.asker.ask(ctx, request)
        if answer.response.approved:
            self._approved.add(ctx.call.id)
            return None
        if answer.via == "non_interactive":
            return Veto(
                ToolResult.error(
                    f"Plan mode is on: this {name} call was not run. It may change things "
                    f"({change}), so it needs approval while planning, in every mode but "
                    "auto (where it is refused), and no one can be asked here. Use commands "
                    "that only read (ls, cat, grep, rg, git status, git diff, git log, ...), "
                    "or call ExitPlanMode first; --yes (Python: approve_asks=True) approves "
                    "it anyway."
                )
            )
        if answer.via == "person":
            return Veto(ToolResult.error(declined_text(ctx, answer.response)))
        return Veto(ToolResult.error(answer.message or f"{name} was not run (plan mode)."))

    def grant(self, ctx: BeforeContext) -> str | None:
        """For the permission gate: writing the plan file in plan mode needs no approval,
        and a call a person just approved here is not asked about twice."""
        if ctx.call.id in self._approved:
            self._approved.discard(ctx.call.id)
            return "the user approved it in plan mode"
        traits = traits_of(ctx.tool)
        if (
            self.state.active
            and traits is not None
            and traits.writes_files
            and self.state.writes_only_the_plan(ctx.execution)
        ):
            return f"plan mode lets {ctx.call.name} write the plan file"
        return None

    async def _review(self, ctx: BeforeContext) -> Decision:
        display = ctx.execution.display
        if not isinstance(display, PlanReviewDisplay) or not display.plan.strip():
            return None  # nothing to review: ExitPlanMode itself says what is missing
        if str(self.mode()) == "auto":
            return Proceed(PlanReview(reviewed=False, how="auto mode"))
        request = ApprovalRequest(
            call_id=ctx.call.id,
            tool=ctx.call.name,
            action="Approve this plan and leave plan mode",
            args={},
            display=display,
            approval_rule=ctx.execution.approval_rule,
            reason="plan mode ends only when the user approves the plan",
        )
        answer = await self.asker.ask(ctx, request)
        response = answer.response
        if response.approved:
            if answer.via == "approve_asks":
                return Proceed(PlanReview(reviewed=False, how="approve_asks (--yes)"))
            return Proceed(PlanReview(reviewed=True, how="the user", selected=response.selected))
        if answer.via == "non_interactive":
            return Veto(
                ToolResult.error(
                    "The plan needs the user's approval, and no one can be asked here (nothing "
                    "interactive is attached), so plan mode is still on. To end plan mode "
                    "without a review: --yes (Python: approve_asks=True) or --mode auto."
                )
            )
        if answer.via != "person":
            detail = answer.message or "the plan could not be reviewed"
            return Veto(ToolResult.error(f"{detail}\nPlan mode is still on."))
        feedback = (response.feedback or "").strip()
        if feedback:
            return Veto(
                ToolResult.ok(
                    "The user did not approve the plan yet; plan mode is still on. Their "
                    f"feedback:\n\n{feedback}\n\nRevise the plan file ({self.state.plan_path}) "
                    "and call ExitPlanMode again."
                )
            )
        return Veto(
            ToolResult.error(
                "The user rejected the plan; plan mode is still on. Do not go ahead: wait for "
                "the user to say what they want instead.",
                stop_turn=True,
            )
        )


def _plain(args: Any) -> Any:
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json")
    return args
