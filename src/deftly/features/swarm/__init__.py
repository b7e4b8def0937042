"""AgentSwarm: a prompt template over many items, one sub-agent each, run through the
agent's sub-agent backend (`deftly.session.subagents`) with a concurrency limit."""

from __future__ import annotations

from deftly.features.swarm.agent_swarm import AgentSwarmParams, AgentSwarmTool
from deftly.features.swarm.plan import MAX_SUBAGENTS, PLACEHOLDER, Entry, plan_swarm
from deftly.features.swarm.render import Report, render_swarm
from deftly.features.swarm.run import run_children
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [ToolContribution.of(AgentSwarmTool)]

__all__ = [
    "CONTRIBUTIONS",
    "MAX_SUBAGENTS",
    "PLACEHOLDER",
    "AgentSwarmParams",
    "AgentSwarmTool",
    "Entry",
    "Report",
    "plan_swarm",
    "render_swarm",
    "run_children",
]
