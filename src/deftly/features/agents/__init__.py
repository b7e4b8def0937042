"""Sub-agents: the Agent tool and the sub-agent types (`coder`, `explore`, `plan`, and the
Markdown files of `.deftly/agents/` and `~/.config/deftly/agents/`), on each agent's
`SubagentDesk` (`deftly.session.subagents`); the backend that runs them is the agent
loop's (`deftly.agent.children`)."""

from __future__ import annotations

from deftly.features.agents.agent import AgentTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [ToolContribution.of(AgentTool)]

__all__ = ["CONTRIBUTIONS", "AgentTool"]
