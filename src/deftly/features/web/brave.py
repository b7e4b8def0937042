"""Brave Search API (`GET https://api.search.brave.com/res/v1/web/search`, the key in
`X-Subscription-Token`, from `$BRAVE_API_KEY` by default)."""

from __future__ import annotations

from typing import Any

from deftly.features.web.search_http import optional, plain, request_json
from deftly.features.web.search_providers import ProviderSettings, SearchResult

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20
"""Brave returns at most 20 results per request."""


class BraveProvider:
    """Searches with the Brave Search API."""

    name = "brave"

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.key = settings.require_key()
        self.url = settings.base_url or BRAVE_URL

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """Up to `limit` web results (extra snippets as content when asked for)."""
        params: dict[str, str | int] = {"q": query, "count": min(limit, MAX_COUNT)}
        if self.settings.include_content:
            params["extra_snippets"] = "true"
        headers = {"Accept": "application/json", "X-Subscription-Token": self.key}
        data = await request_json(self.settings, "GET", self.url, headers=headers, params=params)
        web = data.get("web", {}) if isinstance(data, dict) else {}
        items: list[Any] = web.get("results", []) if isinstance(web, dict) else []
        results = []
        for item in items:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            profile = item.get("profile")
            extra = item.get("extra_snippets")
            results.append(
                SearchResult(
                    title=plain(item.get("title")) or str(item["url"]),
                    url=str(item["url"]),
                    snippet=plain(item.get("description")),
                    date=optional(item.get("page_age")) or optional(item.get("age")),
                    site=optional(profile.get("name")) if isinstance(profile, dict) else None,
                    content="\n".join(plain(s) for s in extra)
                    if isinstance(extra, list) and extra
                    else None,
                )
            )
        return results[:limit]
