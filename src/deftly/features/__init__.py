"""Features: one capability per folder (its tools, services, hooks and injections).

`BUILTIN_FEATURES` is the feature list: adding a feature is its folder plus one line
here (or `Runtime(features=[*BUILTIN_FEATURES, mine])` for a host's own). What a feature
is, and what it is given, is in `deftly.features.api`.
"""

from __future__ import annotations

from deftly.config.base import Section
from deftly.features.agents.feature import FEATURE as AGENTS
from deftly.features.api import Feature, feature_contributions, feature_tables
from deftly.features.ask.feature import FEATURE as ASK
from deftly.features.cron.feature import FEATURE as CRON
from deftly.features.disclosure.feature import FEATURE as DISCLOSURE
from deftly.features.files.feature import FEATURE as FILES
from deftly.features.goals.feature import FEATURE as GOALS
from deftly.features.mcp.feature import FEATURE as MCP
from deftly.features.notify.feature import FEATURE as NOTIFY
from deftly.features.plan.feature import FEATURE as PLAN
from deftly.features.shell.feature import FEATURE as SHELL
from deftly.features.skills.feature import FEATURE as SKILLS
from deftly.features.swarm.feature import FEATURE as SWARM
from deftly.features.todo.feature import FEATURE as TODO
from deftly.features.web.feature import FEATURE as WEB
from deftly.registry.contribution import ToolContribution

BUILTIN_FEATURES: tuple[Feature, ...] = (
    FILES,
    SHELL,
    PLAN,
    SKILLS,
    TODO,
    GOALS,
    NOTIFY,
    ASK,
    CRON,
    WEB,
    AGENTS,
    SWARM,
    MCP,
    DISCLOSURE,
)
"""deftly's own features, in the order their steps run and their tools are offered."""


def builtin_contributions() -> list[ToolContribution]:
    """Every built-in tool deftly can offer, in a stable order."""
    return feature_contributions(BUILTIN_FEATURES)


def builtin_tables() -> dict[str, type[Section]]:
    """The config tables of the built-in features (`[cron]`, `[web]`...)."""
    return feature_tables(BUILTIN_FEATURES)


__all__ = ["BUILTIN_FEATURES", "Feature", "builtin_contributions", "builtin_tables"]
