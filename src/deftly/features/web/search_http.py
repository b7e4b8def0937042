"""One JSON request to a search API, its failures sorted into `SearchError` kinds
(authentication, rate limited, timeout, network, provider), each with what to do.

Search endpoints are the ones the user configured (a self-hosted SearXNG may well be on a
private address), so the address guard does not apply here. httpx is imported on use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deftly.features.web.search_providers import ProviderSettings, SearchError

_TAGS = re.compile(r"<[^>]+>")
_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&#x27;": "'"}


def plain(text: object) -> str:
    """A snippet as plain text: tags (`<strong>`) and the common entities removed."""
    if not isinstance(text, str):
        return ""
    out = _TAGS.sub("", text)
    for entity, char in _ENTITIES.items():
        out = out.replace(entity, char)
    return " ".join(out.split())


def optional(value: object) -> str | None:
    """A field's text, or None when it is missing or blank."""
    return value.strip() or None if isinstance(value, str) else None


async def request_json(
    settings: ProviderSettings,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str | int] | None = None,
    body: Mapping[str, Any] | None = None,
) -> Any:
    """The decoded JSON answer, or SearchError."""
    import httpx

    who = f"the {settings.name} search API"
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(settings.timeout)) as client:
            response = await client.request(
                method, url, headers=dict(headers or {}), params=params, json=body
            )
    except httpx.TimeoutException:
        raise SearchError(
            "timeout", f"{who} did not answer within {settings.timeout:g} s; try again later."
        ) from None
    except httpx.HTTPError as exc:
        raise SearchError(
            "network", f"cannot reach {who} at {url} ({exc or type(exc).__name__})."
        ) from None
    status = response.status_code
    detail = " ".join(response.text[:300].split())
    if status in (401, 403):
        key = (
            f"check the key in ${settings.api_key_env}"
            if settings.api_key_env
            else "check its settings"
        )
        raise SearchError(
            "authentication", f"{who} refused the request (HTTP {status}): {key}. {detail}".strip()
        )
    if status == 429:
        wait = response.headers.get("retry-after")
        when = f"after {wait} s" if wait else "later"
        raise SearchError(
            "rate limited", f"{who} says too many requests (HTTP 429); try again {when}."
        )
    if status >= 400:
        raise SearchError("provider", f"{who} answered HTTP {status}. {detail}".strip())
    try:
        return response.json()
    except ValueError:
        raise SearchError("provider", f"{who} did not answer with JSON: {detail[:120]!r}") from None
