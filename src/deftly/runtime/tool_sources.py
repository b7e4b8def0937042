"""Where an agent's tool contributions come from: the host's `tools=`, `[tools] load`, the
features' own tools, and installed packages (the `deftly.tools` entry point group)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deftly.config.model import DeftlyConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ToolLoadError
from deftly.contract.tool import BaseTool
from deftly.features.api import Feature, feature_contributions
from deftly.registry.contribution import (
    ToolContribution,
    entry_point_contributions,
    load_tool_path,
)

ExtraTool = BaseTool | ToolContribution | type[BaseTool] | str
"""What a host may pass in `Runtime(tools=...)`: a tool, a contribution, a tool class, or a
`"module:Class"` path."""


def as_contribution(
    extra: ToolContribution | type[BaseTool] | str, origin: str
) -> ToolContribution:
    """A contribution for a tool class, a `"module:Class"` path, or a contribution."""
    if isinstance(extra, ToolContribution):
        return extra
    if isinstance(extra, str):
        return load_tool_path(extra)
    if isinstance(extra, type) and issubclass(extra, BaseTool):
        return ToolContribution.of(extra, source="user", origin=origin)
    raise ToolLoadError(f"{origin}: {extra!r} is not a tool, a tool class or a tool path")


def split_extras(extras: Iterable[ExtraTool]) -> tuple[list[BaseTool], list[ToolContribution]]:
    """Ready tool instances (registered as they are) and contributions (activated)."""
    instances: list[BaseTool] = []
    contributions: list[ToolContribution] = []
    for extra in extras:
        if isinstance(extra, BaseTool):
            instances.append(extra)
        else:
            contributions.append(as_contribution(extra, "Runtime(tools=...)"))
    return instances, contributions


def gather_contributions(
    extras: Sequence[ToolContribution],
    config: DeftlyConfig,
    features: Sequence[Feature],
    diagnostics: list[Diagnostic],
    *,
    plugins: bool,
) -> list[ToolContribution]:
    """Every contribution, in the order names are claimed: the host's, `[tools] load`,
    the features', the packages'. A `[tools] load` path that fails is a diagnostic."""
    contributions = list(extras)
    for path in config.tools.load:
        try:
            contributions.append(load_tool_path(path))
        except ToolLoadError as exc:
            diagnostics.append(Diagnostic("error", f"[tools] load {path!r}", str(exc)))
    contributions.extend(feature_contributions(features))
    if plugins:
        contributions.extend(entry_point_contributions(diagnostics))
    return contributions
