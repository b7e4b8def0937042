"""The skills feature: the Skill tool and the skill service behind it.

Session step: the `SkillService` (also offered as `SkillHost`, what the Skill tool needs;
`deftly skills` and MCP prompts use it too); skill roots join the workspace so Read can
open a skill's files. Agent step: the agent's model steps are counted for nested skill
loads, and a running skill's allowed-tools are enforced (by name in preflight, by
pattern once a call is resolved).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from deftly.contract.result import ToolResult
from deftly.execution.calls import ToolCall
from deftly.execution.events import BatchStarted, Event
from deftly.execution.hooks import BeforeContext, Decision, HookOrder, Veto
from deftly.features.api import AgentContext, Feature, SessionContext
from deftly.features.skills import CONTRIBUTIONS
from deftly.features.skills.service import SkillService
from deftly.features.skills.skill import SkillHost, SkillTool
from deftly.registry.contribution import ToolContribution
from deftly.registry.registry import RegisteredTool


class SkillsFeature(Feature):
    """Skills, when `[skills] enabled`."""

    name: ClassVar[str] = "skills"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_session(self, ctx: SessionContext) -> None:
        if not ctx.config.skills.enabled:
            return

        def allow_roots(roots: Sequence[Path]) -> None:
            for root in roots:
                ctx.workspace.add_directory(root)

        service = SkillService(
            ctx.workspace_path,
            ctx.config.skills,
            home=ctx.env.home(),
            session_id=ctx.session_id,
            packages=ctx.options.plugins,
            on_roots=allow_roots,
        )
        ctx.services.provide(service)
        ctx.services.provide(service, SkillHost)

    async def start_agent(self, ctx: AgentContext) -> None:
        service = ctx.services.find(SkillService)
        if service is None:
            return

        def mark_steps(event: Event) -> None:
            identity = getattr(event, "identity", None)
            if identity is not None and identity.agent_id != ctx.agent_id:
                return  # another agent's call
            if isinstance(event, BatchStarted):
                service.nesting.next_step()

        def skill_limit(call: ToolCall, entry: RegisteredTool) -> str | None:
            """A running skill's allowed-tools (loading another skill stays possible)."""
            return None if isinstance(entry.tool, SkillTool) else service.refusal_for(entry.name)

        async def skill_patterns(hook: BeforeContext) -> Decision:
            """Its `Tool(pattern)` entries, once the call is resolved (`Bash(git diff:*)`)."""
            refusal = service.pattern_refusal_for(hook.call.name, hook.execution.matches_rule)
            return Veto(ToolResult.error(refusal)) if refusal is not None else None

        ctx.closers.add_sync(ctx.session.events.subscribe(mark_steps))
        ctx.add_guard(skill_limit)
        ctx.closers.add_sync(
            ctx.before_hooks.add("skill-allowed-tools", skill_patterns, order=HookOrder.PLAN_GUARD)
        )


FEATURE = SkillsFeature()
