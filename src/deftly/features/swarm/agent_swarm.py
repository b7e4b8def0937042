"""AgentSwarm: one prompt template over many items, each item a sub-agent, run through
the agent's sub-agent backend with a concurrency limit; the results in item order."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.agents import AgentsConfig
from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import AgentCallDisplay
from deftly.contract.errors import ToolError
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits, ToolUpdate
from deftly.features.swarm.plan import MAX_SUBAGENTS, PLACEHOLDER, Entry, plan_swarm
from deftly.features.swarm.render import Report, render_swarm
from deftly.features.swarm.run import run_children
from deftly.policy.paths import Workspace
from deftly.session.subagents import (
    AgentProfile,
    ChildBackend,
    ChildOutcome,
    ChildSpec,
    SubagentDesk,
)

DEFAULT_TYPE = "coder"

NonBlank = Annotated[str, Field(min_length=1)]


class AgentSwarmParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = Field(
        min_length=1, description="A few words saying what the swarm does (shown to the user)."
    )
    subagent_type: str | None = Field(
        None, description=f"The kind of sub-agent for every item (default {DEFAULT_TYPE})."
    )
    prompt_template: str | None = Field(
        None,
        description=f"Each sub-agent's prompt, with {PLACEHOLDER} where its item goes "
        "(required with items).",
    )
    items: list[NonBlank] | None = Field(
        None,
        max_length=MAX_SUBAGENTS,
        description="The inputs, one sub-agent each (at least 2 unless resuming).",
    )
    resume_agent_ids: dict[str, NonBlank] | None = Field(
        None,
        description='Earlier sub-agents to continue: agent_id -> its next prompt ("continue").',
    )


class AgentSwarmTool(Tool[AgentSwarmParams]):
    """Fans one task out over many items as sub-agents. It must be the only call of its
    reply (the executor holds and judges it by the `alone_in_reply` trait), it takes the
    whole batch while it runs (`Accesses.all()`), and it is offered only while a backend
    can run children (`delegates`)."""

    name = "AgentSwarm"
    title = "Run a swarm of sub-agents"
    description = describe("agent_swarm.md")
    params = AgentSwarmParams
    traits = ToolTraits(open_world=True, delegates=True, alone_in_reply=True)

    def __init__(self, desk: SubagentDesk, workspace: Workspace, config: AgentsConfig) -> None:
        self.desk = desk
        self.workspace = workspace
        self.config = config
        self._items: dict[str, str] = {}
        """The item of each sub-agent this tool started, so a resume reports it again."""

    def description_vars(self) -> dict[str, object]:
        """The limits enforced and the sub-agent types there are now."""
        return {
            "MAX_SUBAGENTS": MAX_SUBAGENTS,
            "MAX_CONCURRENCY": self.config.max_concurrency,
            "TYPES": _types(self.desk.profiles),
        }

    def resolve(self, args: AgentSwarmParams) -> ToolExecution:
        """Check everything that can be checked before a child starts: the description,
        the type, the plan of entries, and that each resumed sub-agent exists and is idle."""
        description = " ".join(args.description.split())
        if not description:
            raise ToolError("description is blank: give a few words saying what the swarm does.")
        profile = self._profile(args.subagent_type)
        entries = plan_swarm(
            items=args.items,
            prompt_template=args.prompt_template,
            resume_agent_ids=args.resume_agent_ids,
            remembered_items=self._items,
        )
        backend = self.desk.backend
        if backend is not None:
            for entry in entries:
                _check_resumable(backend, entry)

        async def execute(ctx: ToolContext) -> ToolResult:
            return await self._run(ctx, description, profile, entries)

        return ToolExecution(
            accesses=Accesses.all(),
            description=f"Launching agent swarm: {description}",
            display=AgentCallDisplay(
                agent_name=f"swarm ({len(entries)} sub-agents)", prompt=description
            ),
            approval_rule=self.name,
            execute=execute,
        )

    def _profile(self, name: str | None) -> AgentProfile:
        wanted = (name or "").strip() or DEFAULT_TYPE
        profile = self.desk.profile(wanted)
        if profile is not None:
            return profile
        if not self.desk.profiles and wanted == DEFAULT_TYPE:
            return AgentProfile(DEFAULT_TYPE, "A general sub-agent with its parent's tools.")
        known = ", ".join(sorted(self.desk.profiles)) or "none"
        raise ToolError(
            f'There is no sub-agent type "{wanted}". Available types: {known}. Pick one of '
            "them, or leave subagent_type out for the default."
        )

    async def _run(
        self, ctx: ToolContext, description: str, profile: AgentProfile, entries: list[Entry]
    ) -> ToolResult:
        backend = self.desk.backend
        if backend is None:
            return ToolResult.error(
                "No sub-agent can run here now (nothing drives this agent with a model). "
                "Do the work yourself, with your other tools."
            )
        batch = _fresh_batch(backend, len(entries))
        specs = [
            self._spec(ctx, entry, number, batch, description, profile)
            for number, entry in enumerate(entries, 1)
        ]
        for spec in specs:
            if spec.item is not None:
                self._items[spec.agent_id] = spec.item
        done = 0

        def finished(index: int, outcome: ChildOutcome) -> None:
            nonlocal done
            done += 1
            text = f"{done}/{len(specs)} sub-agents finished"
            ctx.report(ToolUpdate("progress", text, progress=done, total=len(specs)))

        outcomes = await run_children(
            backend, specs, limit=self.config.max_concurrency, cancel=ctx.cancel, finished=finished
        )
        reports = [
            Report(entry, spec.agent_id, outcome, stopped_by_user=ctx.cancel.by_user)
            for entry, spec, outcome in zip(entries, specs, outcomes, strict=True)
        ]
        return ToolResult.ok(render_swarm(reports))

    def _spec(
        self,
        ctx: ToolContext,
        entry: Entry,
        number: int,
        batch: str,
        description: str,
        profile: AgentProfile,
    ) -> ChildSpec:
        how = "resume" if entry.resumes else profile.name
        return ChildSpec(
            agent_id=entry.resume_id or f"swarm-{batch}-{number}",
            parent_id=ctx.identity.agent_id,
            profile=profile,
            prompt=entry.prompt,
            description=f"{description} #{number} ({how})",
            resume=entry.resumes,
            session_id=ctx.identity.session_id,
            workspace=str(self.workspace.root),
            timeout=self.config.timeout,
            item=entry.item,
        )


def _fresh_batch(backend: ChildBackend, count: int) -> str:
    """A tag for this swarm's new ids (`swarm-<tag>-<n>`) that no child of the session
    has yet."""
    while True:
        batch = secrets.token_hex(3)
        if not any(backend.known(f"swarm-{batch}-{n}") for n in range(1, count + 1)):
            return batch


def _check_resumable(backend: ChildBackend, entry: Entry) -> None:
    """A resumed sub-agent must exist and be idle."""
    agent_id = entry.resume_id
    if agent_id is None:
        return
    if not backend.known(agent_id):
        raise ToolError(
            f'There is no sub-agent "{agent_id}" in this session to resume. Use the agent_id '
            "values of an earlier AgentSwarm or Agent result."
        )
    if backend.is_running(agent_id):
        raise ToolError(
            f'The sub-agent "{agent_id}" is running now and cannot run twice at once. Wait '
            "for its result, then resume it."
        )


def _types(profiles: Mapping[str, AgentProfile]) -> str:
    if not profiles:
        return f"  - {DEFAULT_TYPE}: a general sub-agent with your tools."
    return "\n".join(
        f"  - {name}: {' '.join(profile.description.split())}"
        for name, profile in sorted(profiles.items())
    )
