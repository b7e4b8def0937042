"""Tavily (`POST https://api.tavily.com/search`, the key as a Bearer token, from
`$TAVILY_API_KEY` by default); with `include_content` it returns each page's text too."""

from __future__ import annotations

from typing import Any

from deftly.features.web.search_http import optional, plain, request_json
from deftly.features.web.search_providers import ProviderSettings, SearchResult

TAVILY_URL = "https://api.tavily.com/search"


class TavilyProvider:
    """Searches with the Tavily API."""

    name = "tavily"

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.key = settings.require_key()
        self.url = settings.base_url or TAVILY_URL

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """Up to `limit` results (`search_depth` from `[web.search] options`, else basic)."""
        body: dict[str, Any] = {
            "query": query,
            "max_results": limit,
            "search_depth": str(self.settings.options.get("search_depth", "basic")),
            "include_raw_content": self.settings.include_content,
        }
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        data = await request_json(self.settings, "POST", self.url, headers=headers, body=body)
        items: list[Any] = data.get("results", []) if isinstance(data, dict) else []
        results = []
        for item in items:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            raw = item.get("raw_content")
            results.append(
                SearchResult(
                    title=plain(item.get("title")) or str(item["url"]),
                    url=str(item["url"]),
                    snippet=plain(item.get("content")),
                    date=optional(item.get("published_date")),
                    content=raw.strip() or None if isinstance(raw, str) else None,
                )
            )
        return results[:limit]
