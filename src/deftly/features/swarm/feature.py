"""The swarm feature: the AgentSwarm tool. It keeps no state of its own and starts
nothing: the children run on the agent's `SubagentDesk` backend (installed by the agent
loop), and the tool's `delegates` trait keeps it off the tool list while there is none."""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import Feature
from deftly.features.swarm import CONTRIBUTIONS
from deftly.registry.contribution import ToolContribution


class SwarmFeature(Feature):
    """Many sub-agents over many items."""

    name: ClassVar[str] = "swarm"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS


FEATURE = SwarmFeature()
