"""Fixtures: the loopback test site, and runtimes with the web feature."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from deftly import Runtime
from deftly.features import BUILTIN_FEATURES
from deftly.features.web.feature import WebFeature
from deftly.features.web.guard import IPAddress, system_resolver
from tests.web.server import WebServer
from tests.web.site import site_routes


@pytest.fixture
def site() -> Iterator[WebServer]:
    """The test site on 127.0.0.1 (its "other host" is `localhost`, another name)."""
    server = WebServer()
    server.routes.update(site_routes(server.url("/plain", host="other.test")))
    with server:
        yield server


class FakeDns:
    """A resolver with fixed answers (names it does not know go to the system's)."""

    def __init__(self, answers: Mapping[str, Sequence[Sequence[IPAddress]]] | None = None):
        self.answers = {k: list(v) for k, v in (answers or {}).items()}
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        self.asked.append(host)
        if host in self.answers:
            queue = self.answers[host]
            return queue.pop(0) if len(queue) > 1 else queue[0]
        return await system_resolver(host, port)


@pytest.fixture
async def web_runtime(make_runtime: Any) -> AsyncIterator[Callable[..., Any]]:
    """`await web_runtime(web={...}, dns=FakeDns(...), environ={...})`: a started runtime
    with the built-in features and the web feature, `[web]` as given (by default
    127.0.0.1 allowed, so the test site is reachable)."""

    async def make(
        web: Mapping[str, Any] | None = None,
        *,
        dns: FakeDns | None = None,
        environ: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Runtime:
        table = {"allow_hosts": ["127.0.0.1"], **(web or {})}
        feature = WebFeature(resolver=dns or FakeDns(), environ=environ or {})
        config = {**kwargs.pop("config", {}), "web": table}
        runtime: Runtime = await make_runtime(features=with_web(feature), config=config, **kwargs)
        return runtime

    yield make


def with_web(feature: WebFeature) -> list[Any]:
    """The built-in features, with `feature` in place of the built-in web feature."""
    return [feature if isinstance(f, WebFeature) else f for f in BUILTIN_FEATURES]
