"""A Moonshot-compatible search service (`POST <base_url>` with `{"text_query": ...}`, the
key as a Bearer token, from `$MOONSHOT_API_KEY` by default), as the reference agent's
search service speaks it; its answer is `search_results[]`."""

from __future__ import annotations

from typing import Any

from deftly.features.web.search_http import optional, plain, request_json
from deftly.features.web.search_providers import ProviderSettings, SearchResult


class MoonshotProvider:
    """Searches a Moonshot-compatible search endpoint."""

    name = "moonshot"

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.url = settings.require_url()
        self.key = settings.require_key()

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """The service's results, at most `limit` of them (it takes no count)."""
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        data = await request_json(
            self.settings, "POST", self.url, headers=headers, body={"text_query": query}
        )
        items: list[Any] = data.get("search_results", []) if isinstance(data, dict) else []
        results = []
        for item in items:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            content = item.get("content") if self.settings.include_content else None
            results.append(
                SearchResult(
                    title=plain(item.get("title")) or str(item["url"]),
                    url=str(item["url"]),
                    snippet=plain(item.get("snippet")),
                    date=optional(item.get("date")),
                    site=optional(item.get("site_name")),
                    content=content.strip() or None if isinstance(content, str) else None,
                )
            )
        return results[:limit]
