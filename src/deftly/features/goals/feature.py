"""The goals feature: the session goal, its four tools, and its budget in the agent loop.

Agent step: a `GoalService` in the agent's scope (the tools take it by type). For the main
agent it reads and writes the session store's `goal` key, registers itself as a turn
budget, turn listener and state reader on `ctx.loop` (a compacted history keeps an
unfinished goal), and tells the model the active goal at each turn's start (an injection
of kind `goal`). A sub-agent's service refuses every goal call.
"""

from __future__ import annotations

from typing import ClassVar

from deftly.contract.identity import MAIN_AGENT
from deftly.features.api import AgentContext, Feature
from deftly.features.goals import CONTRIBUTIONS
from deftly.features.goals.service import GoalService
from deftly.registry.contribution import ToolContribution


class GoalsFeature(Feature):
    """A goal for the session's main agent."""

    name: ClassVar[str] = "goals"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_agent(self, ctx: AgentContext) -> None:
        main = ctx.agent_id == MAIN_AGENT
        goals = GoalService(ctx.session.store if main else None, main=main, mode=lambda: ctx.mode)
        ctx.services.provide(goals)
        if not main:
            return
        ctx.closers.add_sync(ctx.loop.add_budget(goals))
        ctx.closers.add_sync(ctx.loop.on_turn_start(goals.turn_started))
        ctx.closers.add_sync(ctx.loop.on_turn_end(goals.turn_ended))
        ctx.closers.add_sync(ctx.injections.add_source(goals.injections, "goal"))
        ctx.closers.add_sync(ctx.loop.add_state(goals.state_text))


FEATURE = GoalsFeature()
