"""CronList: the session's cron jobs, with when each fires next."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.cron.common import refusal
from deftly.features.cron.expression import DAY, CronSyntaxError, parse
from deftly.features.cron.human import cron_to_human
from deftly.features.cron.state import CronJob, CronService
from deftly.features.cron.timing import is_stale, local_iso, next_fire_at

PROMPT_PREVIEW_BYTES = 200
TRUNCATED = "…(truncated)"


class CronListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CronListTool(Tool[CronListParams]):
    """Lists the jobs (read-only: plan mode lets it run, manual mode never asks)."""

    name = "CronList"
    title = "List scheduled prompts"
    description = describe("cron_list.md")
    params = CronListParams
    traits = ToolTraits(read_only=True, idempotent=True, uses_inbox=True)

    def __init__(self, service: CronService) -> None:
        self.service = service

    def resolve(self, args: CronListParams) -> ToolExecution | ToolResult:
        refused = refusal(self.service)
        if refused is not None:
            return refused
        return ToolExecution(
            accesses=Accesses.none(),
            execute=self._list,
            approval_rule=self.name,
            description="Listing cron jobs",
        )

    def _list(self, ctx: ToolContext) -> ToolResult:
        jobs = self.service.jobs()
        head = f"cron_jobs: {len(jobs)}"
        if not jobs:
            return ToolResult.ok(f"{head}\nNo cron jobs scheduled.")
        now = self.service.clock.now()
        records = [self._record(job, now) for job in jobs]
        return ToolResult.ok(head + "\n" + "\n---\n".join(records))

    def _record(self, job: CronJob, now: float) -> str:
        try:
            expr = parse(job.cron)
        except CronSyntaxError:
            human, fire = job.cron, None
        else:
            human = cron_to_human(job.cron)
            fire = next_fire_at(job, expr, jitter=self.service.jitter)
        return "\n".join(
            [
                f"id: {job.id}",
                f"cron: {job.cron}",
                f"humanSchedule: {human}",
                f"prompt: {preview(job.prompt)}",
                f"nextFireAt: {local_iso(fire) if fire is not None else 'null'}",
                f"recurring: {'true' if job.recurring else 'false'}",
                f"ageDays: {max(0.0, now - job.created_at) / DAY:.2f}",
                f"stale: {'true' if is_stale(job, now) else 'false'}",
            ]
        )


def preview(prompt: str) -> str:
    """The prompt as a JSON string, cut to its first 200 UTF-8 bytes (never inside a
    character) with a mark when cut."""
    raw = prompt.encode("utf-8")
    if len(raw) <= PROMPT_PREVIEW_BYTES:
        return json.dumps(prompt, ensure_ascii=False)
    cut = raw[:PROMPT_PREVIEW_BYTES].decode("utf-8", errors="ignore")
    return json.dumps(cut, ensure_ascii=False) + TRUNCATED
