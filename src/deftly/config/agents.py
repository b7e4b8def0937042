"""`[agents]`: how sub-agents run (the Agent and AgentSwarm tools; the local or the Ray backend).

A core table, not a feature's: the agent loop reads it to bound delegation, and both
tools read it. In an untrusted workspace only settings that narrow apply (a shorter
timeout, fewer steps, less depth, less concurrency); see `deftly.config.untrusted`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deftly.config.base import Section


class AgentsConfig(Section):
    """`[agents]`: limits on sub-agents."""

    timeout: float = Field(
        7200,
        gt=0,
        description="Seconds one sub-agent run may take before it is stopped (resume goes on).",
    )
    max_depth: int = Field(
        2,
        ge=1,
        le=8,
        description=(
            "Levels of agents that may delegate: 1 lets only the main agent start "
            "sub-agents; 2 (the default) also lets a sub-agent whose profile names a "
            "delegating tool start its own."
        ),
    )
    max_concurrency: int = Field(
        4, ge=1, le=128, description="Sub-agents an AgentSwarm call runs at the same time."
    )
    max_steps: int = Field(
        0,
        ge=0,
        description="Most steps in one sub-agent turn (0: the same limit as `[loop] max_steps`).",
    )
    backend: Literal["local", "ray"] = Field(
        "local",
        description=(
            'Where sub-agents run: "local" (in this process) or "ray" (each child a Ray '
            "task on the cluster at `ray_address`; needs `pip install 'deftly[ray]'`)."
        ),
    )
    ray_address: str | None = Field(
        None,
        description=(
            'The Ray cluster for `backend = "ray"`: "auto" (the cluster this machine '
            'belongs to), an address ("ray://host:10001", "host:6379"), or unset to start '
            "a private local instance when the first child runs."
        ),
    )
    ray_num_cpus: float = Field(
        1, gt=0, description="CPUs Ray reserves for each sub-agent's task (Ray backend)."
    )
