"""CronDelete: delete a cron job by its id."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.cron.common import refusal
from deftly.features.cron.ids import is_job_id
from deftly.features.cron.state import CronService
from deftly.policy.rules import glob_rule_matcher, literal_rule


class CronDeleteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="The job's id, as CronCreate or CronList gave it.")


class CronDeleteTool(Tool[CronDeleteParams]):
    """Deletes a job. Like CronCreate it changes scheduled work (`schedules_work`: plan mode
    refuses it)."""

    name = "CronDelete"
    title = "Delete a scheduled prompt"
    description = describe("cron_delete.md")
    params = CronDeleteParams
    traits = ToolTraits(schedules_work=True, uses_inbox=True, destructive=True, idempotent=True)

    def __init__(self, service: CronService) -> None:
        self.service = service

    def resolve(self, args: CronDeleteParams) -> ToolExecution | ToolResult:
        refused = refusal(self.service)
        if refused is not None:
            return refused
        job_id = args.id.strip()
        if not is_job_id(job_id):
            return ToolResult.error(
                f'"{args.id}" is not a cron job id: ids are 26-character ULIDs, as CronCreate '
                "and CronList show them."
            )

        async def delete(ctx: ToolContext) -> ToolResult:
            if not self.service.remove(job_id):
                return ToolResult.error(
                    f"There is no cron job with the id {job_id} (CronList shows the jobs "
                    "there are)."
                )
            return ToolResult.ok(f"Deleted cron job {job_id}: it will not fire again.")

        return ToolExecution(
            execute=delete,
            approval_rule=literal_rule(self.name, job_id),
            matches_rule=glob_rule_matcher(job_id),
            description=f"Deleting cron job {job_id}",
            display=GenericDisplay(summary=f"delete cron job {job_id}"),
        )
