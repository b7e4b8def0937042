"""The shell feature: Bash and the background-task tools.

Session step: one `BackgroundTasks` manager for the session (every agent's tasks), its
logs in the session directory (readable by the file tools), every task stopped on close.
Agent step: task endings reach the agent's model on its next result.
"""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import AgentContext, Feature, SessionContext
from deftly.features.shell import CONTRIBUTIONS
from deftly.features.shell.tasks import BackgroundTasks
from deftly.registry.contribution import ToolContribution


class ShellFeature(Feature):
    """Bash, TaskList, TaskOutput, TaskStop, WaitFor and their task manager."""

    name: ClassVar[str] = "shell"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_session(self, ctx: SessionContext) -> None:
        tasks = BackgroundTasks(
            ctx.env,
            ctx.config.shell,
            ctx.session_area / "tasks",
            workspace=ctx.workspace,
            events=ctx.events,
            background=ctx.options.background,
        )
        ctx.diagnostics.extend(await tasks.check())
        ctx.workspace.add_directory(tasks.log_dir)
        ctx.services.provide(tasks)
        ctx.on_close(tasks.close)

    async def start_agent(self, ctx: AgentContext) -> None:
        tasks = ctx.services.find(BackgroundTasks)
        if tasks is not None:
            ctx.add_notice_source(tasks)


FEATURE = ShellFeature()
