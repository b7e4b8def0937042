"""The disclosure feature: select_tools and deferred tools.

Agent step: the agent's `DeferredTools` (what it loaded, what it was told), the guard
that refuses a deferred tool not loaded yet, and the explanation of a loaded tool that
went away. With a session store, the loaded names are kept there, so a resumed session
has them loaded again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from deftly.execution.events import Event, ToolCallFinished
from deftly.features.api import AgentContext, Feature
from deftly.features.disclosure import CONTRIBUTIONS
from deftly.features.disclosure.disclosure import DEFERRED_TOOLS_KIND, DeferredTools
from deftly.registry.contribution import ToolContribution


class DisclosureFeature(Feature):
    """Deferred disclosure for each agent (`[mcp] select_tools`)."""

    name: ClassVar[str] = "disclosure"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_agent(self, ctx: AgentContext) -> None:
        mcp = ctx.session.config.mcp
        deferred = DeferredTools(
            ctx.registry,
            ctx.is_switched_on,
            enabled=mcp.select_tools,
            defer_mcp=mcp.defer_mcp_tools,
        )
        # The announcement is one of the agent's injection sources (until close: a restart
        # builds a new DeferredTools on the same channel).
        deferred.injections = ctx.injections
        ctx.closers.add_sync(
            ctx.injections.add_source(deferred.pending_injections, DEFERRED_TOOLS_KIND)
        )
        ctx.add_guard(deferred.guard)
        ctx.add_missing(deferred.describe_missing)
        ctx.services.provide(deferred)
        ctx.closers.add_sync(_keep_loaded(ctx, deferred))


class LoadedTools(BaseModel):
    """The deferred tools one agent loaded, as kept in the session store."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    names: list[str] = []


def _keep_loaded(ctx: AgentContext, deferred: DeferredTools) -> Callable[[], None]:
    """Load again what the agent had loaded (a resumed session), then save the loaded set
    after each of the agent's calls that changed it; returns the way to stop saving."""
    slot = ctx.session.store.slot(f"disclosure.{ctx.agent_id}", LoadedTools)
    deferred.loaded.update(slot.get().names)
    saved = sorted(deferred.loaded)

    def save(event: Event) -> None:
        nonlocal saved
        if not isinstance(event, ToolCallFinished):
            return
        identity = getattr(event, "identity", None)
        if identity is not None and identity.agent_id != ctx.agent_id:
            return
        current = sorted(deferred.loaded)
        if current != saved:
            saved = current
            slot.set(LoadedTools(names=current))

    return ctx.session.events.subscribe(save)


FEATURE = DisclosureFeature()
