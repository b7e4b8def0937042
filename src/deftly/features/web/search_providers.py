"""Who answers WebSearch: the `WebSearchProvider` protocol, the built-in providers, and
plugins from the entry-point group `deftly.web_search`.

A plugin's entry point names a factory: a callable taking `ProviderSettings` and returning
a provider (an object with `name` and `async search(query, *, limit)`). It raises
`ProviderUnavailable` when it cannot work (a missing key): the tool is then absent and the
reason is a diagnostic. Keys come from the environment only (`[web.search] api_key_env`
names the variable).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Literal, Protocol, TypeAlias

from deftly.contract.records import frozen
from deftly.features.web.config import SearchConfig
from deftly.registry.entry_points import entry_points

ENTRY_POINT_GROUP = "deftly.web_search"

ErrorKind: TypeAlias = Literal["authentication", "rate limited", "timeout", "network", "provider"]


@frozen
class SearchResult:
    """One search hit: where, what it is called, what it says; the rest when known."""

    title: str
    url: str
    snippet: str
    date: str | None = None
    site: str | None = None
    content: str | None = None


class SearchError(Exception):
    """A search that failed, and how (`kind`), for a clear tool error."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ProviderUnavailable(Exception):
    """A configured provider that cannot work here; the message says what to set."""


@frozen
class ProviderSettings:
    """What a provider is built from: `[web.search]`, with the key read from the
    environment variable it names."""

    name: str
    base_url: str | None
    api_key: str | None
    api_key_env: str | None
    timeout: float
    max_results: int
    include_content: bool
    options: Mapping[str, Any] = field(default_factory=dict)

    def require_key(self) -> str:
        """The key, or ProviderUnavailable naming the variable to set."""
        if not self.api_key:
            raise ProviderUnavailable(
                f"the {self.name} search provider needs an API key: set the environment "
                f"variable {self.api_key_env} (or name another one in [web.search] api_key_env)."
            )
        return self.api_key

    def require_url(self) -> str:
        """The endpoint, or ProviderUnavailable saying to configure it."""
        if not self.base_url:
            raise ProviderUnavailable(
                f"the {self.name} search provider needs its address: set [web.search] base_url."
            )
        return self.base_url


class WebSearchProvider(Protocol):
    """Answers web searches for WebSearch."""

    name: str

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """At most `limit` results for `query`; raise SearchError when the search fails."""
        ...


ProviderFactory: TypeAlias = Callable[[ProviderSettings], WebSearchProvider]


@frozen
class _Builtin:
    factory: str
    key_env: str | None


BUILTIN_PROVIDERS: dict[str, _Builtin] = {
    "searxng": _Builtin("deftly.features.web.searxng:SearxngProvider", "SEARXNG_API_KEY"),
    "brave": _Builtin("deftly.features.web.brave:BraveProvider", "BRAVE_API_KEY"),
    "tavily": _Builtin("deftly.features.web.tavily:TavilyProvider", "TAVILY_API_KEY"),
    "moonshot": _Builtin("deftly.features.web.moonshot:MoonshotProvider", "MOONSHOT_API_KEY"),
}
"""The providers deftly ships: name -> factory and the usual key variable."""


def _import(path: str) -> ProviderFactory:
    module, _, attr = path.partition(":")
    factory: ProviderFactory = getattr(importlib.import_module(module), attr)
    return factory


def _plugin(name: str) -> ProviderFactory:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            try:
                factory: ProviderFactory = entry.load()
            except Exception as exc:
                raise ProviderUnavailable(
                    f'the search provider plugin "{name}" ({entry.value}) cannot be loaded: {exc}'
                ) from None
            return factory
    known = ", ".join([*BUILTIN_PROVIDERS, *_plugin_names()])
    raise ProviderUnavailable(
        f'there is no search provider named "{name}" (known: {known}); fix [web.search] '
        f"provider, or install the package that brings it (entry point group {ENTRY_POINT_GROUP})."
    )


def _plugin_names() -> list[str]:
    return [entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)]


def load_provider(
    config: SearchConfig, environ: Mapping[str, str], *, plugins: bool = True
) -> WebSearchProvider:
    """The provider `[web.search]` names, built; ProviderUnavailable when it cannot be."""
    name = (config.provider or "").strip()
    builtin = BUILTIN_PROVIDERS.get(name)
    if builtin is not None:
        factory = _import(builtin.factory)
        key_env = config.api_key_env or builtin.key_env
    elif plugins:
        factory = _plugin(name)
        key_env = config.api_key_env
    else:
        raise ProviderUnavailable(
            f'there is no built-in search provider named "{name}" (built in: '
            f"{', '.join(BUILTIN_PROVIDERS)}), and plugins, which could bring it, are off here."
        )
    settings = ProviderSettings(
        name=name,
        base_url=config.base_url.rstrip("/") if config.base_url else None,
        api_key=environ.get(key_env) if key_env else None,
        api_key_env=key_env,
        timeout=config.timeout,
        max_results=config.max_results,
        include_content=config.include_content,
        options=dict(config.options),
    )
    try:
        provider = factory(settings)
    except ProviderUnavailable:
        raise
    except Exception as exc:
        raise ProviderUnavailable(
            f'the search provider "{name}" failed to start: {exc!r}'
        ) from None
    if not callable(getattr(provider, "search", None)):
        raise ProviderUnavailable(f'the search provider "{name}" has no search method.')
    return provider
