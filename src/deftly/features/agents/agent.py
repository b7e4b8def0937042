"""Agent: hand one task to a sub-agent, in the foreground (the call waits for its report)
or in the background (a task on the session's board; its end reaches this agent as a
notice), or continue an earlier sub-agent by its id.

The tool only describes the run (`ChildSpec`) and renders its outcome; the agent's
`SubagentDesk` holds the profiles and the backend that runs children (installed by an
agent loop: without one the tool is not offered, by its `delegates` trait).
"""

from __future__ import annotations

import logging
import secrets
import string

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.agents import AgentsConfig
from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import AgentCallDisplay
from deftly.contract.errors import ToolError
from deftly.contract.result import ToolResult
from deftly.contract.tool import CancelToken, Tool, ToolContext, ToolExecution, ToolTraits
from deftly.contract.traits import traits_of
from deftly.features.agents import render
from deftly.features.agents.profiles import DEFAULT_PROFILE
from deftly.features.agents.running import BackgroundRuns
from deftly.policy.rules import glob_rule_matcher
from deftly.registry.offer import ToolOffer
from deftly.session.subagents import (
    AgentProfile,
    ChildBackend,
    ChildSpec,
    SubagentDesk,
    spoken_duration,
)
from deftly.session.tasks import TaskBoard, TaskStatus, TextTask

log = logging.getLogger(__name__)

RESUME_WITH_TYPE = (
    "Cannot set subagent_type when resuming an existing agent. Resume by agent id only."
)
NO_BACKGROUND = (
    "Background agent execution is not available for this agent because TaskList, "
    "TaskOutput, and TaskStop are not enabled."
)
NO_BACKEND = (
    "Sub-agents cannot run here: nothing drives this agent with a model. Do the work yourself."
)
BACKGROUND_ON = (
    "\nWith `run_in_background: true` the call returns at once with a task id and the "
    "sub-agent works on while you go on; its end reaches you later as a message of its "
    "own. Do not wait, sleep or poll for it (TaskList, TaskOutput and TaskStop work on "
    "it if you must). Run in the foreground when you need the result to go on.\n"
)
BACKGROUND_OFF = (
    "\nBackground runs are not available here (the task tools are not enabled): every "
    "call waits for the sub-agent's report.\n"
)
RESUMED_LABEL = "resumed"
_ID_ALPHABET = string.digits + string.ascii_lowercase
_STATUS = {
    "completed": TaskStatus.COMPLETED,
    "failed": TaskStatus.FAILED,
    "cancelled": TaskStatus.KILLED,
    "timed_out": TaskStatus.TIMED_OUT,
}


class AgentParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt: str = Field(
        min_length=1,
        description=(
            "The whole task for the sub-agent: it sees nothing of this conversation, so "
            "say what to do, what you know, and what to report."
        ),
    )
    description: str = Field(
        min_length=1, description="A short label for the task (3-5 words), shown to the user."
    )
    subagent_type: str | None = Field(
        None, description="The agent type to start (see the list above); default coder."
    )
    resume: str | None = Field(
        None,
        description=(
            "The agent_id of a sub-agent you started earlier, to continue it with `prompt` "
            "as its next message (do not set subagent_type then)."
        ),
    )
    run_in_background: bool = Field(
        False,
        description="Return at once and let the sub-agent work on; its end arrives later.",
    )


class AgentTool(Tool[AgentParams]):
    """Starts (or resumes) a sub-agent and returns its report.

    Read-only as far as the permission chain goes: the launch itself changes nothing, and
    every call the sub-agent makes is decided on its own by the same chain (same mode,
    rules and session approvals), so asking about the launch would ask twice. It declares
    no accesses, so several Agent calls of one reply run at the same time."""

    name = "Agent"
    title = "Run a sub-agent"
    description = describe("agent.md")
    params = AgentParams
    traits = ToolTraits(delegates=True, read_only=True)

    def __init__(
        self,
        desk: SubagentDesk,
        config: AgentsConfig,
        offer: ToolOffer,
        runs: BackgroundRuns,
        board: TaskBoard,
    ) -> None:
        self.desk = desk
        self.config = config
        self.offer = offer
        self.runs = runs
        self.board: TaskBoard | None = board

    # -- the description -----------------------------------------------------------------

    def description_vars(self) -> dict[str, object]:
        """The agent types as the desk has them now, with the tools each would get here."""
        entries = self.offer.entries()
        plain = [
            e.name for e in entries if not ((t := traits_of(e.tool)) is not None and t.delegates)
        ]
        every = [e.name for e in entries]
        lines: list[str] = []
        for profile in self.desk.profiles.values():
            names = every if profile.tools is not None else plain
            lines.append(f"- {profile.name}: {profile.description}")
            lines.append(f"  Tools: {render.tool_set(profile, names)}")
        return {
            "TIMEOUT": spoken_duration(self.config.timeout),
            "BACKGROUND": BACKGROUND_ON if self._background_possible() else BACKGROUND_OFF,
            "DEFAULT_TYPE": DEFAULT_PROFILE,
            "AGENT_TYPES": "\n".join(lines) if lines else "- (none defined)",
        }

    # -- a call --------------------------------------------------------------------------

    def resolve(self, args: AgentParams) -> ToolExecution:
        """Check the arguments against each other and the known types; nothing runs."""
        resume = (args.resume or "").strip() or None
        wanted = (args.subagent_type or "").strip() or None
        if resume is not None and wanted is not None:
            raise ToolError(RESUME_WITH_TYPE)
        if resume is not None:
            profile_name = self._profile_of(resume) or RESUMED_LABEL
            profile: AgentProfile | None = None
        else:
            profile_name = wanted or DEFAULT_PROFILE
            profile = self.desk.profile(profile_name)
            if profile is None:
                known = ", ".join(self.desk.profiles) or "none"
                raise ToolError(
                    f'Unknown agent type: "{profile_name}". Available agent types: {known}.'
                )
        background = args.run_in_background
        label = " ".join(args.description.split())

        async def execute(ctx: ToolContext) -> ToolResult:
            return await self._run(args, ctx, resume, profile, label)

        return ToolExecution(
            accesses=Accesses.none(),
            description=(
                f"Launching{' background' if background else ''} {profile_name} agent: {label}"
            ),
            display=AgentCallDisplay(
                agent_name=profile_name, prompt=args.prompt, background=background
            ),
            approval_rule=self.name,
            matches_rule=glob_rule_matcher(profile_name),
            execute=execute,
        )

    async def _run(
        self,
        args: AgentParams,
        ctx: ToolContext,
        resume: str | None,
        profile: AgentProfile | None,
        label: str,
    ) -> ToolResult:
        backend = self.desk.backend
        if backend is None:
            return ToolResult.error(NO_BACKEND)
        if args.run_in_background and not self._background_possible():
            return ToolResult.error(NO_BACKGROUND)
        if resume is not None:
            problem = _resume_problem(backend, resume)
            if problem is not None:
                return ToolResult.error(problem)
        spec = ChildSpec(
            agent_id=resume or self._new_id(profile),
            parent_id=ctx.identity.agent_id,
            profile=profile or self._resumed_profile(resume),
            prompt=args.prompt,
            description=label,
            resume=resume is not None,
            session_id=ctx.identity.session_id,
            timeout=self.config.timeout,
            settings={"background": args.run_in_background},
        )
        if args.run_in_background:
            return self._start_background(backend, spec)
        outcome = await backend.run(spec, ctx.cancel)
        if outcome.ok:
            return ToolResult.ok(render.completed(outcome), note=render.usage_note(outcome))
        return ToolResult.error(render.failed(outcome))

    def _start_background(self, backend: ChildBackend, spec: ChildSpec) -> ToolResult:
        assert self.board is not None
        token = CancelToken()
        task = TextTask(
            self.board,
            "agent",
            spec.description,
            owner=spec.parent_id,
            stopper=lambda reason: self.runs.stop(task.id, reason),
        )
        shown = (self._profile_of(spec.agent_id) if spec.resume else None) or spec.profile.name

        async def work() -> None:
            try:
                outcome = await backend.run(spec, token)
            except Exception as exc:  # the backend promises not to raise; be safe anyway
                log.warning("a background sub-agent failed: %s", exc)
                task.write(f"subagent error: {exc}\n")
                task.finish(TaskStatus.FAILED, str(exc))
                return
            text = render.completed(outcome) if outcome.ok else render.failed(outcome)
            task.write(text + "\n")
            status = _STATUS.get(outcome.status, TaskStatus.FAILED)
            detail = "" if outcome.ok else f'continue it with Agent(resume="{outcome.agent_id}")'
            task.finish(status, detail, message=render.finished(task.id, task.description, outcome))

        self.runs.start(task.id, work(), token)
        return ToolResult.ok(render.background(task.id, spec.agent_id, shown, spec.description))

    # -- helpers -------------------------------------------------------------------------

    def _background_possible(self) -> bool:
        """Background runs need the board and tools to read and stop its tasks."""
        if self.board is None:
            return False
        return self.offer.any(lambda t: t.stops_tasks) and self.offer.any(
            lambda t: t.reads_task_output
        )

    def _profile_of(self, agent_id: str) -> str | None:
        backend = self.desk.backend
        profile_of = getattr(backend, "profile_of", None)
        if not callable(profile_of):
            return None
        found = profile_of(agent_id)
        return found if isinstance(found, str) else None

    def _resumed_profile(self, agent_id: str | None) -> AgentProfile:
        """The type a resumed child had (the backend runs it as that type anyway)."""
        name = self._profile_of(agent_id) if agent_id else None
        found = self.desk.profile(name) if name else None
        return found or AgentProfile(name or RESUMED_LABEL, "")

    def _new_id(self, profile: AgentProfile | None) -> str:
        prefix = profile.name if profile is not None else "agent"
        backend = self.desk.backend
        while True:
            agent_id = prefix + "-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
            if backend is None or not backend.known(agent_id):
                return agent_id


def _resume_problem(backend: ChildBackend, agent_id: str) -> str | None:
    if not backend.known(agent_id):
        return (
            f'Agent instance "{agent_id}" does not exist. Resume only an agent_id an '
            "earlier Agent call of yours returned, or start a new agent."
        )
    if backend.is_running(agent_id):
        return (
            f'Agent instance "{agent_id}" is already running and cannot run concurrently. '
            "Wait for its result, or start a new agent."
        )
    return None
