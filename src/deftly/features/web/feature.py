"""The web feature: FetchURL and WebSearch, the `[web]` table.

Session step: the `[web]` section, the `Fetcher` (its address guard, its httpx client,
closed with the session) and the `PageCache` for paging; and, when `[web.search]` names a
provider that can work here, the `SearchEngine` WebSearch is built from. A provider that
cannot (a missing key, an unknown name) leaves WebSearch out, with a diagnostic saying
what to set. Both tools need the environment's `network` capability.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from deftly.config.base import Section
from deftly.contract.diagnostics import Diagnostic
from deftly.features.api import Feature, SessionContext
from deftly.features.web import CONTRIBUTIONS
from deftly.features.web.config import WebConfig
from deftly.features.web.fetcher import Fetcher
from deftly.features.web.guard import AddressGuard, Resolver, system_resolver
from deftly.features.web.pages import PageCache
from deftly.features.web.search_providers import ProviderUnavailable, load_provider
from deftly.features.web.web_search import SearchEngine
from deftly.registry.contribution import ToolContribution


class WebFeature(Feature):
    """Web pages and web search. `resolver` and `environ` are for hosts and tests that
    resolve names or keep keys their own way (default: the system's)."""

    name: ClassVar[str] = "web"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS
    config_tables: ClassVar[dict[str, type[Section]]] = {"web": WebConfig}

    def __init__(
        self, *, resolver: Resolver = system_resolver, environ: Mapping[str, str] | None = None
    ) -> None:
        self.resolver = resolver
        self.environ = environ

    async def start_session(self, ctx: SessionContext) -> None:
        config = ctx.config.section(WebConfig)
        ctx.services.provide(config)
        guard = AddressGuard(
            config.allow_hosts, allow_private=config.allow_private, resolver=self.resolver
        )
        fetcher = Fetcher(config, guard)
        ctx.services.provide(fetcher)
        ctx.on_close(fetcher.aclose)
        ctx.services.provide(PageCache(config.cache_seconds))
        if not config.search.provider:
            return
        environ = os.environ if self.environ is None else self.environ
        try:
            provider = load_provider(config.search, environ, plugins=ctx.options.plugins)
        except ProviderUnavailable as exc:
            ctx.diagnostics.append(
                Diagnostic("warning", "[web.search]", f"WebSearch is not available: {exc}")
            )
            return
        ctx.services.provide(SearchEngine(provider, config.search))
        close = getattr(provider, "aclose", None)
        if callable(close):
            ctx.on_close(close)


FEATURE = WebFeature()
"""The web feature with the system's resolver and environment."""
