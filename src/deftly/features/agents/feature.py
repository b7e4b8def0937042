"""The agents feature: sub-agent types and the Agent tool.

Session step: the profile catalogue, read once: the built-in types (`coder`, `explore`,
`plan`), then the user's files (`~/.config/deftly/agents/*.md`), then the workspace's
(`.deftly/agents/*.md`); a broken file is a diagnostic. Agent step: the catalogue on the
agent's `SubagentDesk` (AgentSwarm reads the same desk), and the agent's background runs,
stopped when the agent closes.

The backend that runs children is not this feature's: an agent loop installs it on the
desk (`deftly.agent`), and the Agent tool is offered only while there is one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from deftly.config.loader import user_config_dir
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.records import frozen
from deftly.features.agents import CONTRIBUTIONS
from deftly.features.agents.profile_files import load_profiles
from deftly.features.agents.profiles import BUILTIN_PROFILES
from deftly.features.agents.running import BackgroundRuns
from deftly.features.api import AgentContext, Feature, SessionContext
from deftly.registry.contribution import ToolContribution
from deftly.session.subagents import AgentProfile

PROFILE_DIR = "agents"


@frozen
class ProfileCatalog:
    """The session's sub-agent types, by name (built-ins first, files after)."""

    profiles: tuple[AgentProfile, ...]


def profile_folders(workspace: Path) -> list[Path]:
    """Where user-defined types are read from, in order (a later one wins a name)."""
    return [user_config_dir() / PROFILE_DIR, workspace / ".deftly" / PROFILE_DIR]


class AgentsFeature(Feature):
    """Sub-agent types and the Agent tool."""

    name: ClassVar[str] = "agents"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_session(self, ctx: SessionContext) -> None:
        loaded = await asyncio.to_thread(load_profiles, profile_folders(ctx.workspace_path))
        for path, problem in loaded.problems:
            ctx.diagnostics.append(
                Diagnostic("warning", f"agent type {path}", f"left out: {problem}")
            )
        by_name = {p.name: p for p in BUILTIN_PROFILES}
        by_name.update({p.name: p for p in loaded.profiles})
        ctx.services.provide(ProfileCatalog(tuple(by_name.values())))

    async def start_agent(self, ctx: AgentContext) -> None:
        catalog = ctx.services.find(ProfileCatalog)
        profiles = catalog.profiles if catalog is not None else BUILTIN_PROFILES
        ctx.subagents.profiles.clear()
        ctx.subagents.profiles.update({p.name: p for p in profiles})
        runs = BackgroundRuns()
        ctx.services.provide(runs)
        ctx.closers.add(runs.close)


FEATURE = AgentsFeature()
