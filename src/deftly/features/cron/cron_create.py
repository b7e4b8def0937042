"""CronCreate: schedule a prompt to run at times given by a cron expression."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.cron.common import refusal
from deftly.features.cron.expression import DAY, CronExpression, CronSyntaxError, parse
from deftly.features.cron.human import cron_to_human
from deftly.features.cron.ids import new_job_id
from deftly.features.cron.state import CronJob, CronService
from deftly.features.cron.timing import local_iso, next_fire_at
from deftly.policy.rules import glob_rule_matcher, literal_rule

MAX_PROMPT_BYTES = 8192
ONE_SHOT_HORIZON = 350 * DAY
"""A one-shot further out than this is almost surely a date that has passed this year."""


class CronCreateParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cron: str = Field(
        description="Five fields in local time: minute hour day-of-month month day-of-week, "
        'e.g. "*/5 * * * *" or "30 14 28 2 *".'
    )
    prompt: str = Field(
        min_length=1,
        max_length=MAX_PROMPT_BYTES,
        description="The prompt to run when the job fires, written so it stands on its own.",
    )
    recurring: bool = Field(
        default=True,
        description="true: fire at every match until deleted (or 7 days old); false: fire "
        "once at the next match, then the job is deleted.",
    )


class CronCreateTool(Tool[CronCreateParams]):
    """Schedules a prompt. It changes work that runs later (`schedules_work`: plan mode
    refuses it) and is offered only while something runs the prompts (`uses_inbox`)."""

    name = "CronCreate"
    title = "Schedule a prompt"
    description = describe("cron_create.md")
    params = CronCreateParams
    traits = ToolTraits(schedules_work=True, uses_inbox=True)

    def __init__(self, service: CronService) -> None:
        self.service = service

    def description_vars(self) -> dict[str, object]:
        return {"MAX_JOBS": self.service.settings.max_jobs, "MAX_PROMPT_BYTES": MAX_PROMPT_BYTES}

    def resolve(self, args: CronCreateParams) -> ToolExecution | ToolResult:
        """Every check that needs no change: the expression, its next fire, the job cap, the
        prompt's size, a one-shot that would fire only next year."""
        refused = refusal(self.service)
        if refused is not None:
            return refused
        try:
            expr = parse(args.cron)
        except CronSyntaxError as exc:
            return ToolResult.error(f"The cron expression cannot be used: {exc}.")
        now = self.service.clock.now()
        first = expr.next_fire(now)
        if first is None:
            return ToolResult.error(
                f'The cron expression "{expr.text}" never matches within the next 5 years '
                "(a date such as 31 February), so it was not scheduled. Check the day and "
                "month fields."
            )
        problem = self._cap_problem() or _prompt_problem(args.prompt)
        if problem:
            return ToolResult.error(problem)
        if not args.recurring and first - now > ONE_SHOT_HORIZON:
            return ToolResult.error(
                f'The one-shot "{expr.text}" would first fire on {local_iso(first)}, more than '
                "a year away. If you meant today or a date soon, the day and month you pinned "
                "have already passed this year: pick a date still ahead, or use wildcards."
            )
        subject = json.dumps(
            {"cron": expr.text, "prompt": args.prompt, "recurring": args.recurring},
            ensure_ascii=False,
            separators=(",", ":"),
        )

        async def create(ctx: ToolContext) -> ToolResult:
            return self._create(expr, args.prompt, args.recurring)

        kind = "cron" if args.recurring else "one-shot"
        return ToolExecution(
            execute=create,
            approval_rule=literal_rule(self.name, subject),
            matches_rule=glob_rule_matcher(subject),
            description=f"Scheduling {kind} {expr.text}",
            display=GenericDisplay(summary=_summary(kind, expr, args.prompt)),
        )

    def _cap_problem(self) -> str | None:
        cap = self.service.settings.max_jobs
        if self.service.count() < cap:
            return None
        return (
            f"This session already holds {cap} cron jobs, the most it may have. Delete one "
            "with CronDelete (CronList shows them) before scheduling another."
        )

    def _create(self, expr: CronExpression, prompt: str, recurring: bool) -> ToolResult:
        problem = self._cap_problem()
        if problem:
            return ToolResult.error(problem)
        now = self.service.clock.now()
        job = CronJob(
            id=new_job_id(now), cron=expr.text, prompt=prompt, created_at=now, recurring=recurring
        )
        self.service.add(job)
        fire = next_fire_at(job, expr, jitter=self.service.jitter)
        lines = [
            f"id: {job.id}",
            f"cron: {expr.text}",
            f"humanSchedule: {cron_to_human(expr.text)}",
            f"recurring: {'true' if recurring else 'false'}",
            f"nextFireAt: {local_iso(fire) if fire is not None else 'null'}",
        ]
        saved = self.service.problem
        if saved:
            lines.append(f"warning: {saved}")
        return ToolResult.ok("\n".join(lines))


def _summary(kind: str, expr: CronExpression, prompt: str) -> str:
    """One line for a UI: the schedule and the prompt's first line."""
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return f"{kind} {expr.text} ({cron_to_human(expr.text)}): {first[:120]}"


def _prompt_problem(prompt: str) -> str | None:
    size = len(prompt.encode("utf-8"))
    if size <= MAX_PROMPT_BYTES:
        return None
    return (
        f"The prompt is {size} bytes in UTF-8, more than the {MAX_PROMPT_BYTES} a job may "
        "hold. Shorten it, or put the details in a file and have the prompt point to it."
    )
