"""Features: one capability per folder (its tools, services, hooks and injections).

`BUILTIN_FEATURES` is the feature list: adding a feature is its folder plus one line
here (or `Runtime(features=[*BUILTIN_FEATURES, mine])` for a host's own). What a feature
is, and what it is given, is in `deftly.features.api`.

The list is imported on first use (PEP 562): importing one feature's module (say the MCP
manager, for `deftly mcp list`) must not import every other feature, their tools and
their libraries.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from deftly.features.api import Feature, feature_contributions, feature_tables

if TYPE_CHECKING:
    from deftly.config.base import Section
    from deftly.registry.contribution import ToolContribution

    BUILTIN_FEATURES: tuple[Feature, ...]

_BUILTIN_MODULES = (
    "deftly.features.files.feature",
    "deftly.features.shell.feature",
    "deftly.features.plan.feature",
    "deftly.features.skills.feature",
    "deftly.features.todo.feature",
    "deftly.features.goals.feature",
    "deftly.features.notify.feature",
    "deftly.features.ask.feature",
    "deftly.features.cron.feature",
    "deftly.features.web.feature",
    "deftly.features.agents.feature",
    "deftly.features.swarm.feature",
    "deftly.features.mcp.feature",
    "deftly.features.disclosure.feature",
)
"""deftly's own features (each module's `FEATURE`), in the order their steps run and their
tools are offered."""


def _builtin_features() -> tuple[Feature, ...]:
    features: tuple[Feature, ...] = tuple(
        importlib.import_module(module).FEATURE for module in _BUILTIN_MODULES
    )
    globals()["BUILTIN_FEATURES"] = features  # the next lookup is a plain attribute
    return features


def _features() -> tuple[Feature, ...]:
    features: tuple[Feature, ...] | None = globals().get("BUILTIN_FEATURES")
    return _builtin_features() if features is None else features


def __getattr__(name: str) -> object:
    """`BUILTIN_FEATURES`, built (every feature imported) on first use and kept."""
    if name == "BUILTIN_FEATURES":
        return _builtin_features()
    raise AttributeError(f"module 'deftly.features' has no attribute {name!r}")


def builtin_contributions() -> list[ToolContribution]:
    """Every built-in tool deftly can offer, in a stable order."""
    return feature_contributions(_features())


def builtin_tables() -> dict[str, type[Section]]:
    """The config tables of the built-in features (`[cron]`, `[web]`...)."""
    return feature_tables(_features())


__all__ = ["BUILTIN_FEATURES", "Feature", "builtin_contributions", "builtin_tables"]
