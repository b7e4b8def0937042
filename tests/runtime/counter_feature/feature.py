"""The counter feature: its config table, its session service, its tool."""

from __future__ import annotations

from typing import ClassVar

from deftly.config.base import Section
from deftly.features.api import Feature, SessionContext
from deftly.registry.contribution import ToolContribution
from tests.runtime.counter_feature.counter import Count, CounterState, CounterTool


class CounterConfig(Section):
    """`[counter]`: how much one step adds."""

    step: int = 1


class CounterFeature(Feature):
    """A Counter tool keeping its count in the session store."""

    name: ClassVar[str] = "counter"
    contributions: ClassVar[list[ToolContribution]] = [ToolContribution.of(CounterTool)]
    config_tables: ClassVar[dict[str, type[Section]]] = {"counter": CounterConfig}

    async def start_session(self, ctx: SessionContext) -> None:
        step = ctx.config.section(CounterConfig).step
        ctx.services.provide(Count(ctx.store.slot("counter", CounterState), step))


FEATURE = CounterFeature()
