"""The web tools: FetchURL (pages, text, JSON, PDF, images, through the address guard) and
WebSearch (through a configured `WebSearchProvider`: SearXNG, Brave, Tavily, a
Moonshot-compatible service, or a `deftly.web_search` plugin).

Nothing here imports httpx, trafilatura, pypdf or Pillow until a call needs them.
"""

from __future__ import annotations

from deftly.env.base import NETWORK
from deftly.features.web.config import SearchConfig, WebConfig
from deftly.features.web.fetch_url import FetchURLTool
from deftly.features.web.guard import REFUSED_NETWORKS, AddressGuard, FetchRefused, Target
from deftly.features.web.search_providers import (
    ENTRY_POINT_GROUP,
    ProviderSettings,
    ProviderUnavailable,
    SearchError,
    SearchResult,
    WebSearchProvider,
)
from deftly.features.web.web_search import SearchEngine, WebSearchTool
from deftly.registry.contribution import ToolContribution
from deftly.registry.services import Services


def _has_search_engine(services: Services) -> bool:
    return SearchEngine in services


CONTRIBUTIONS: list[ToolContribution] = [
    ToolContribution.of(FetchURLTool, requires={NETWORK}),
    ToolContribution.of(WebSearchTool, requires={NETWORK}, when=_has_search_engine),
]

__all__ = [
    "CONTRIBUTIONS",
    "ENTRY_POINT_GROUP",
    "REFUSED_NETWORKS",
    "AddressGuard",
    "FetchRefused",
    "FetchURLTool",
    "ProviderSettings",
    "ProviderUnavailable",
    "SearchConfig",
    "SearchEngine",
    "SearchError",
    "SearchResult",
    "Target",
    "WebConfig",
    "WebSearchProvider",
    "WebSearchTool",
]
