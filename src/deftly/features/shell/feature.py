"""The shell feature: Bash and the background-task tools.

Session step: one `BackgroundTasks` manager for the session (every agent's tasks), its
logs in the session directory (readable by the file tools), every task stopped on close.
Background commands are posted on the session's `TaskBoard`, whose endings the runtime
gives each agent as "task_finished" injections (any kind of task); the task tools read
the board, so they list, read, stop and wait for sub-agents and questions too. Without
an agent loop the endings ride on the next result's note, as before.
"""

from __future__ import annotations

from typing import ClassVar

from deftly.execution.notices import TASK_FINISHED_KIND
from deftly.features.api import AgentContext, Feature, SessionContext
from deftly.features.shell import CONTRIBUTIONS
from deftly.features.shell.tasks import BackgroundTasks
from deftly.registry.contribution import ToolContribution
from deftly.session.injections import Injection
from deftly.session.tasks import TaskBoard


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
            board=ctx.services.find(TaskBoard),
        )

        async def check() -> None:
            ctx.diagnostics.extend(await tasks.check())

        ctx.alongside(check())  # the sandbox probe waits on bubblewrap: the others go on
        ctx.workspace.add_directory(tasks.log_dir)
        ctx.services.provide(tasks)
        ctx.on_close(tasks.close)

    async def start_agent(self, ctx: AgentContext) -> None:
        tasks = ctx.services.find(BackgroundTasks)
        if tasks is None or not tasks.own_board:
            return  # the session's board: the runtime tells each agent of its endings

        agent_id = ctx.agent_id

        def ended() -> list[Injection]:
            """Tasks this agent started that ended since the last drain (each told once)."""
            ended_here = tasks.take_notices(agent_id)
            return [Injection(TASK_FINISHED_KIND, n.message) for n in ended_here]

        ctx.closers.add_sync(ctx.injections.add_source(ended, TASK_FINISHED_KIND))


FEATURE = ShellFeature()
