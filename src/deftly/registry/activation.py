"""Activation: which contributions become tools for this agent.

A contribution is skipped when its name is taken, the environment lacks a capability it
needs, the profile or the tool policy leaves it out, or its `when` predicate says no.
Skipped tools are never constructed. A tool that declines to load is absent, not broken.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ToolDeclined, ToolLoadError
from deftly.contract.records import frozen
from deftly.contract.tool import BaseTool
from deftly.policy.tool_policy import ToolPolicy
from deftly.registry.contribution import ToolContribution
from deftly.registry.registry import ToolRegistry
from deftly.registry.services import Services, build


@frozen
class Profile:
    """An agent's tool set: an allow list (None: all) and names it must not have."""

    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()

    @property
    def policy(self) -> ToolPolicy:
        """The profile as a tool policy (its allow list and its refused names)."""
        return ToolPolicy(self.tools, self.disallowed_tools)


@dataclass
class Activation:
    """Turns contributions into tools for one agent: checks each against the registry, the env's
    capabilities, the profile and the tool policy, builds the ones that pass with their
    dependencies from `services`, and records why others were left out in `diagnostics`."""

    registry: ToolRegistry
    services: Services
    capabilities: frozenset[str]
    profile: Profile = field(default_factory=Profile)
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def activate(self, contributions: Iterable[ToolContribution]) -> list[str]:
        """Register every eligible contribution; returns the names added."""
        added: list[str] = []
        for contribution in contributions:
            tool = self._activate_one(contribution)
            if tool is not None:
                self.registry.register(
                    tool, source=contribution.source, disclosure=contribution.disclosure
                )
                added.append(tool.name)
        return added

    def _eligible(self, name: str, contribution: ToolContribution) -> bool:
        if name in self.registry:
            return False
        if not contribution.requires <= self.capabilities:
            return False
        if not self.profile.policy.is_active(name, contribution.source):
            return False
        return self.policy.is_active(name, contribution.source)

    def _activate_one(self, contribution: ToolContribution) -> BaseTool | None:
        name = contribution.name
        if name is not None and not self._eligible(name, contribution):
            return None
        label = f'Tool "{name}"' if name else f"The tool from {contribution.origin}"
        try:
            if contribution.when is not None and not contribution.when(self.services):
                return None
            tool: object = build(contribution.factory, self.services, label=label)
        except ToolDeclined as exc:
            self.diagnostics.append(Diagnostic("warning", label, f"not loaded: {exc}"))
            return None
        except ToolLoadError as exc:
            self.diagnostics.append(Diagnostic("error", contribution.origin, str(exc)))
            return None
        except Exception as exc:
            self.diagnostics.append(
                Diagnostic("error", contribution.origin, f"{label} failed to load: {exc!r}")
            )
            return None
        if not isinstance(tool, BaseTool):
            self.diagnostics.append(
                Diagnostic(
                    "error",
                    contribution.origin,
                    f"{label} built a {type(tool).__name__}, not a tool",
                )
            )
            return None
        try:
            tool.description  # noqa: B018 - a description file that is missing fails here
        except ToolLoadError as exc:
            self.diagnostics.append(Diagnostic("error", contribution.origin, str(exc)))
            return None
        if name is None and not self._eligible(tool.name, contribution):
            return None
        if name is not None and tool.name != name:
            self.diagnostics.append(
                Diagnostic(
                    "error",
                    contribution.origin,
                    f'contribution "{name}" built a tool named "{tool.name}"; the names must agree',
                )
            )
            return None
        return tool


def known_names(contributions: Sequence[ToolContribution], registry: ToolRegistry) -> set[str]:
    """Every tool name that could exist here: the contributions' and the registered ones (a rule
    naming none of them never applies)."""
    return {c.name for c in contributions if c.name} | set(registry.names())
