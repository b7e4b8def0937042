"""FetchURL's limits against the loopback site: redirects (a chain, a loop, another host,
a private address), the guard on every hop, the pinned connection, the time limit, a
50 MB body cut at the size limit, and the description stating the limits."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly.contract.errors import ConfigError
from deftly.contract.tool import CancelToken
from deftly.execution.calls import ToolCall
from tests.web.conftest import FakeDns
from tests.web.server import WebServer
from tests.web.site import HUGE, PLAIN, site_routes

LOOPBACK = ipaddress.ip_address("127.0.0.1")


async def fetch(runtime: Any, url: str) -> Any:
    return await runtime.call("FetchURL", {"url": url})


async def test_a_redirect_chain_on_one_host_is_followed(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/hop1"))
    assert not result.is_error
    assert result.text.startswith(
        f"Fetched {site.url('/plain')} (redirected from {site.url('/hop1')}). The returned "
        "content is the full response body"
    )
    assert result.text.endswith(PLAIN)
    assert site.paths() == ["/hop1", "/hop2", "/hop3", "/plain"]


async def test_too_many_redirects_stop_after_the_limit(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime({"max_redirects": 3})
    result = await fetch(rt, site.url("/loop"))
    assert result.is_error
    assert result.text.startswith(
        f"Too many redirects while fetching {site.url('/loop')} (the limit is 3)"
    )
    assert site.paths() == ["/loop"] * 4


async def test_more_than_five_redirects_cannot_be_configured(web_runtime: Any) -> None:
    with pytest.raises(ConfigError, match=r"web\.max_redirects"):
        await web_runtime({"max_redirects": 6})


async def test_a_redirect_without_location_is_the_answer(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/no-location"))
    assert (result.is_error, result.text.rpartition("\n\n")[2]) == (False, "odd")


async def test_a_redirect_to_a_private_address_is_refused_before_any_connection(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime()
    for path, address in [("/to-metadata", "169.254.169.254"), ("/to-private", "10.0.0.7")]:
        result = await fetch(rt, site.url(path))
        assert result.is_error
        assert result.text.startswith(f"{site.url(path)} redirects to http://{address}/")
        assert f"Refusing to fetch http://{address}/" in result.text
        assert "private, local or reserved" in result.text
    assert site.paths() == ["/to-metadata", "/to-private"]


async def test_a_redirect_to_a_name_resolving_privately_is_refused(
    web_runtime: Any, site: WebServer
) -> None:
    dns = FakeDns({"site.test": [[LOOPBACK], [ipaddress.ip_address("192.168.1.1")]]})
    rt = await web_runtime({"allow_hosts": ["127.0.0.1"]}, dns=dns)
    result = await fetch(rt, site.url("/hop1", host="site.test"))
    assert result.is_error
    assert '"site.test" resolves to 192.168.1.1, in 192.168.0.0/16' in result.text
    assert dns.asked == ["site.test", "site.test"]  # once per hop
    assert site.paths() == ["/hop1"]


async def test_a_redirect_to_another_host_is_handed_back(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/to-other-host"))
    assert (result.is_error, result.text) == (
        False,
        f"{site.url('/to-other-host')} redirects to another host: "
        f"{site.url('/plain', host='other.test')}. The redirect was not followed; to read "
        "that page, call FetchURL with that URL.",
    )
    assert site.paths() == ["/to-other-host"]


async def test_the_connection_goes_to_the_checked_address_with_the_real_host_name(
    web_runtime: Any, site: WebServer
) -> None:
    # "pinned.test" exists only in this resolver: the fetch can reach the server only by
    # connecting to the address the guard checked, never by resolving the name again.
    dns = FakeDns({"pinned.test": [[LOOPBACK], [ipaddress.ip_address("127.0.0.2")]]})
    rt = await web_runtime({"allow_hosts": ["127.0.0.1"]}, dns=dns)
    result = await fetch(rt, site.url("/plain", host="pinned.test"))
    assert not result.is_error, result.text
    assert dns.asked == ["pinned.test"]
    [seen] = site.requests
    assert seen.headers["host"] == f"pinned.test:{site.port}"
    assert "deftly" in seen.headers["user-agent"]


async def test_a_slow_response_hits_the_time_limit(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime({"timeout": 1})
    result = await fetch(rt, site.url("/slow"))
    assert result.is_error
    assert result.text.startswith(
        f"Fetching {site.url('/slow')} took longer than 1 s (the [web] timeout)"
    )


async def test_a_50_mb_body_is_cut_at_the_limit_without_reading_it_all(
    web_runtime: Any, site: WebServer
) -> None:
    limit = 1024 * 1024
    rt = await web_runtime({"max_bytes": limit})
    result = await fetch(rt, site.url("/huge"))
    assert result.is_error
    assert result.text.startswith(
        f"The response from {site.url('/huge')} is too large: more than {limit:,} bytes, over "
        f"the {limit:,}-byte limit ([web] max_bytes)"
    )
    assert site.finished["/huge"].wait(30)  # the server saw the client go away
    assert site.counters["/huge"] < HUGE // 4


async def test_a_declared_length_over_the_limit_is_refused_before_the_body(
    web_runtime: Any, site: WebServer
) -> None:
    limit = 1024 * 1024
    rt = await web_runtime({"max_bytes": limit})
    result = await fetch(rt, site.url("/huge-declared"))
    assert result.is_error
    assert f"is too large: {HUGE:,} bytes, over the {limit:,}-byte limit" in result.text
    assert site.finished["/huge-declared"].wait(30)
    assert site.counters["/huge-declared"] < HUGE // 4


async def test_private_addresses_are_refused_unless_allowed(
    web_runtime: Any, site: WebServer
) -> None:
    closed = await web_runtime({"allow_hosts": []})
    refused = await fetch(closed, site.url("/plain"))
    assert refused.is_error and "private, local or reserved" in refused.text
    opened = await web_runtime({"allow_hosts": [], "allow_private": True})
    assert not (await fetch(opened, site.url("/plain"))).is_error
    assert site.paths() == ["/plain"]


async def test_a_closed_port_is_a_clear_error(web_runtime: Any) -> None:
    rt = await web_runtime()
    result = await fetch(rt, "http://127.0.0.1:9/")
    assert result.is_error
    assert result.text.startswith("Cannot connect to 127.0.0.1 for http://127.0.0.1:9/")


async def test_the_description_states_the_configured_limits(web_runtime: Any) -> None:
    rt = await web_runtime({"max_bytes": 2 * 1024 * 1024, "timeout": 12, "max_redirects": 2})
    entry = rt.registry.get("FetchURL")
    assert entry is not None
    text = entry.tool.description
    assert "over 2 MB are refused" in text
    assert "may take 12 s" in text
    assert "at most 2 redirects" in text
    assert "pages of up to 30,000 characters" in text


CERTS = Path(__file__).parent / "certs"


@pytest.fixture
def secure_site() -> Iterator[WebServer]:
    """An https server on 127.0.0.1 whose certificate names secure.test only."""
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(CERTS / "secure.test.pem", CERTS / "secure.test.key")
    with WebServer(site_routes("https://elsewhere.test/"), tls=tls) as server:
        yield server


async def test_https_is_pinned_to_the_checked_address_and_verified_for_the_host(
    web_runtime: Any, secure_site: WebServer
) -> None:
    dns = FakeDns({"secure.test": [[LOOPBACK]], "impostor.test": [[LOOPBACK]]})
    web = {"allow_hosts": ["127.0.0.1"], "ca_bundle": str(CERTS / "secure.test.pem")}
    rt = await web_runtime(web, dns=dns)
    url = secure_site.url("/plain", host="secure.test")
    result = await fetch(rt, url)
    assert not result.is_error, result.text
    assert result.text.endswith(PLAIN)
    assert secure_site.requests[0].headers["host"] == f"secure.test:{secure_site.port}"
    impostor = await fetch(rt, secure_site.url("/plain", host="impostor.test"))
    assert impostor.is_error
    assert impostor.text.startswith("The TLS certificate of impostor.test could not be verified")
    assert len(secure_site.requests) == 1


async def test_an_unusable_certificate_file_is_a_clear_error(
    web_runtime: Any, tmp_path: Path, site: WebServer
) -> None:
    rt = await web_runtime({"ca_bundle": str(tmp_path / "missing.pem")})
    result = await fetch(rt, site.url("/plain"))
    assert result.is_error
    assert "([web] ca_bundle) cannot be used" in result.text


async def test_a_cancelled_fetch_ends_at_once(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime({"timeout": 120})
    started = site.finished.setdefault("/slow started", threading.Event())
    token = CancelToken()
    batch = asyncio.create_task(
        rt.run_batch([ToolCall("c1", "FetchURL", {"url": site.url("/slow")})], cancel=token)
    )
    assert await asyncio.to_thread(started.wait, 30)  # the server has the request
    token.cancel("stop", by_user=True)
    [result] = await asyncio.wait_for(batch, 30)
    assert result.is_error
    # the tool's own words: it stopped on the token, not after the executor's grace period
    assert result.text == f"Fetching {site.url('/slow')} was cancelled before it finished."
