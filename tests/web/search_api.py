"""Fake search APIs on loopback, one per provider, answering in that provider's format,
plus the failures every provider must report clearly."""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.web.server import Handler, Route, WebServer

HITS = [
    {"title": "Result 1", "url": "https://example.com/1", "snippet": "Snippet 1"},
    {
        "title": "Result 2",
        "url": "https://example.com/2",
        "snippet": "Snippet 2",
        "date": "2024-01-01",
    },
]


def _json(payload: Any, status: int = 200, **headers: str) -> Route:
    def route(h: Handler) -> None:
        h.reply(status, json.dumps(payload).encode(), "application/json", headers)

    return route


def searxng(hits: list[dict[str, Any]]) -> Any:
    return {
        "query": "q",
        "results": [
            {
                "title": h["title"],
                "url": h["url"],
                "content": h["snippet"],
                "engine": "duckduckgo",
                **({"publishedDate": h["date"]} if "date" in h else {}),
            }
            for h in hits
        ],
    }


def brave(hits: list[dict[str, Any]]) -> Any:
    return {
        "type": "search",
        "web": {
            "results": [
                {
                    "title": h["title"],
                    "url": h["url"],
                    "description": h["snippet"].replace("Snippet", "<strong>Snippet</strong>"),
                    "profile": {"name": "Example Co"},
                    "extra_snippets": ["more text", "and more"],
                    **({"page_age": h["date"]} if "date" in h else {}),
                }
                for h in hits
            ]
        },
    }


def tavily(hits: list[dict[str, Any]]) -> Any:
    return {
        "query": "q",
        "results": [
            {
                "title": h["title"],
                "url": h["url"],
                "content": h["snippet"],
                "score": 0.9,
                "raw_content": "Full page text of " + h["title"] + ". " + "x" * 300,
                **({"published_date": h["date"]} if "date" in h else {}),
            }
            for h in hits
        ],
    }


def moonshot(hits: list[dict[str, Any]]) -> Any:
    return {
        "search_results": [
            {
                "title": h["title"],
                "url": h["url"],
                "snippet": h["snippet"],
                "content": "page",
                **({"date": h["date"]} if "date" in h else {}),
            }
            for h in hits
        ]
    }


FORMATS = {"searxng": searxng, "brave": brave, "tavily": tavily, "moonshot": moonshot}
PATHS = {
    "searxng": "/searxng/search",
    "brave": "/brave",
    "tavily": "/tavily",
    "moonshot": "/moonshot",
}


def _slow(h: Handler) -> None:
    h.server.finished.setdefault("/slow started", threading.Event()).set()
    h.server.released.wait(60)
    h.reply(200, b"{}", "application/json")


def search_api(hits: list[dict[str, Any]] | None = None) -> WebServer:
    """A server answering every provider's API with `hits` (default: two results)."""
    found = HITS if hits is None else hits
    server = WebServer({path: _json(FORMATS[name](found)) for name, path in PATHS.items()})
    server.routes.update(
        {
            "/status/401": _json({"error": "invalid key"}, 401),
            "/status/403": _json({"error": "forbidden"}, 403),
            "/status/429": _json({"error": "slow down"}, 429, **{"Retry-After": "7"}),
            "/status/503": _json({"error": "down"}, 503),
            "/slow": _slow,
            "/not-json": lambda h: h.reply(200, b"<html>oops</html>", "text/html"),
        }
    )
    return server
