"""SearXNG, the self-hosted metasearch engine, through its JSON API
(`GET <base_url>/search?q=...&format=json`; the instance must list `json` in
`search.formats` of its settings.yml). A key is optional (sent as a Bearer token, for
instances behind an authenticating proxy)."""

from __future__ import annotations

from typing import Any

from deftly.features.web.search_http import optional, plain, request_json
from deftly.features.web.search_providers import ProviderSettings, SearchError, SearchResult


class SearxngProvider:
    """Searches one SearXNG instance."""

    name = "searxng"

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        base = settings.require_url()
        self.url = base if base.endswith("/search") else base + "/search"

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """Up to `limit` results of the instance's first page."""
        headers = {"Accept": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        params: dict[str, str | int] = {"q": query, "format": "json", "pageno": 1}
        for key in ("language", "categories", "engines", "safesearch", "time_range"):
            if key in self.settings.options:
                params[key] = str(self.settings.options[key])
        try:
            data = await request_json(
                self.settings, "GET", self.url, headers=headers, params=params
            )
        except SearchError as exc:
            if "HTTP 403" in str(exc):
                raise SearchError(
                    "provider",
                    f"{exc} A SearXNG instance answers 403 when its JSON API is off: add json "
                    "to search.formats in its settings.yml.",
                ) from None
            raise
        items: list[Any] = data.get("results", []) if isinstance(data, dict) else []
        results = []
        for item in items:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            results.append(
                SearchResult(
                    title=plain(item.get("title")) or str(item["url"]),
                    url=str(item["url"]),
                    snippet=plain(item.get("content")),
                    date=optional(item.get("publishedDate")),
                )
            )
        return results[:limit]
