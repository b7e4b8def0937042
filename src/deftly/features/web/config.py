"""`[web]`: the limits FetchURL keeps, the hosts it may reach, and the search provider.

```toml
[web]
allow_hosts = ["127.0.0.1", "wiki.corp", "10.1.0.0/16"]  # reachable although private
allow_private = false      # true: no address check at all (only http and https)
max_bytes = 10485760       # the largest response body read
timeout = 30               # seconds for the whole fetch, redirects included
max_redirects = 5          # at most 5
page_chars = 30000         # characters per page of a long document
ca_bundle = "/etc/ssl/corp-ca.pem"   # certificate authorities to trust instead of the usual

[web.search]
provider = "brave"         # searxng, brave, tavily, moonshot, or a `deftly.web_search` plugin
api_key_env = "BRAVE_API_KEY"   # the environment variable holding the key
max_results = 8
```

Keys never live in a config file: `api_key_env` names the environment variable. A
workspace's own `[web]` table applies only in a trusted workspace (the loader withholds a
feature's table whole), so a cloned repository cannot open private addresses.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from deftly.config.base import Section

MAX_REDIRECTS = 5
"""The most redirects a fetch follows, whatever the configuration says."""


class SearchConfig(Section):
    """`[web.search]`: which provider WebSearch asks, where, with which key."""

    provider: str | None = Field(
        None,
        description="searxng, brave, tavily, moonshot, or the name of a `deftly.web_search` "
        "entry point; None: no WebSearch tool.",
    )
    base_url: str | None = Field(
        None, description="The provider's endpoint (needed for searxng and moonshot)."
    )
    api_key_env: str | None = Field(
        None,
        description="The environment variable holding the key (None: the provider's usual "
        "one, e.g. BRAVE_API_KEY).",
    )
    max_results: int = Field(8, ge=1, le=50, description="The most results one search returns.")
    timeout: float = Field(20.0, gt=0, le=300, description="Seconds one search may take.")
    include_content: bool = Field(
        False, description="Ask the provider for page content too, where it offers it."
    )
    content_chars: int = Field(
        2_000, ge=100, le=20_000, description="Characters of content kept per result."
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Extra settings for a plugin provider."
    )


class WebConfig(Section):
    """`[web]`: FetchURL's limits and reach, and `[web.search]`."""

    allow_hosts: list[str] = Field(
        default_factory=list,
        description="Host names (`wiki.corp`, `*.corp`), addresses or networks "
        "(`10.1.0.0/16`) FetchURL may reach although they are private.",
    )
    allow_private: bool = Field(
        False, description="Reach every address, private ones included (only http and https)."
    )
    max_bytes: int = Field(
        10 * 1024 * 1024, ge=1_024, le=200 * 1024 * 1024, description="The largest body read."
    )
    timeout: float = Field(
        30.0, gt=0, le=600, description="Seconds for the whole fetch, redirects included."
    )
    max_redirects: int = Field(MAX_REDIRECTS, ge=0, le=MAX_REDIRECTS)
    page_chars: int = Field(
        30_000, ge=1_000, le=200_000, description="Characters per page of a long document."
    )
    cache_seconds: float = Field(
        900.0, ge=0, description="How long a fetched page is kept for paging (0: not kept)."
    )
    ca_bundle: str | None = Field(
        None,
        description="A PEM file of certificate authorities to trust instead of the usual "
        "ones (a company's own CA).",
    )
    user_agent: str = Field(
        "Mozilla/5.0 (compatible; deftly-fetch/0.1)", description="The User-Agent header."
    )
    search: SearchConfig = Field(default_factory=SearchConfig)
