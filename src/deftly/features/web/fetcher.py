"""Fetching one URL within the `[web]` limits: the guard on every hop, a pinned connection,
a bounded body, one deadline for everything.

Redirects are followed by hand (at most `max_redirects`, never more than 5), each target
checked by the guard before anything is sent to it. A redirect to another host is not
followed: the result names the new URL, so the model fetches it with a call of its own,
which the permission rules (`FetchURL(domain:...)`) then judge like any other.

Pinning: the request goes to the checked IP address itself (the URL's host replaced by
the address, the `Host` header and, for https, the TLS server name set to the real host,
so the certificate is verified for that host). Connections are not kept alive, so no
connection made for one host is reused for another. Proxies from the environment are not
used: the guard could not vouch for what a proxy connects to.

httpx is imported on first use, never by `import deftly`.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from deftly.contract.records import frozen
from deftly.features.web.config import MAX_REDIRECTS, WebConfig
from deftly.features.web.guard import AddressGuard, FetchRefused, Target, url_host

if TYPE_CHECKING:
    import httpx

HTTPX_GRACE = 5.0
"""httpx's own timeouts are this much longer than `[web] timeout`, so the one deadline
for the whole fetch is what ends a slow one (and what the model is told)."""
REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT = (
    "text/html;q=1.0, text/markdown;q=0.95, text/plain;q=0.9, application/json;q=0.9, "
    "application/pdf;q=0.8, image/*;q=0.7, */*;q=0.5"
)


class FetchFailed(Exception):
    """The fetch did not give a body; the message says why and what to do next."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@frozen
class Fetched:
    """What a fetch brought back."""

    requested: str
    url: str
    """Where the body came from (after redirects within the host)."""
    status: int
    media_type: str
    """The Content-Type's media type, lower case ("" when the server sent none)."""
    charset: str | None
    body: bytes
    moved_to: str | None = None
    """A redirect to another host that was not followed (then `body` is empty)."""


def same_site(a: str, b: str) -> bool:
    """Whether a redirect from `a` to `b` stays on one host (`www.` aside)."""
    host_a, host_b = url_host(a), url_host(b)
    if host_a is None or host_b is None:
        return False
    return host_a.removeprefix("www.") == host_b.removeprefix("www.")


def _media_type(header: str) -> tuple[str, str | None]:
    kind, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return kind.strip().lower(), charset


class Fetcher:
    """Fetches URLs for FetchURL, one httpx client per session (made on first use)."""

    def __init__(self, config: WebConfig, guard: AddressGuard) -> None:
        self.config = config
        self.guard = guard
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            verify: ssl.SSLContext | bool = True
            if self.config.ca_bundle:
                try:
                    verify = ssl.create_default_context(cafile=self.config.ca_bundle)
                except (OSError, ssl.SSLError) as exc:
                    raise FetchFailed(
                        f"The certificate file {self.config.ca_bundle} ([web] ca_bundle) cannot "
                        f"be used ({exc}); fix the setting or remove it."
                    ) from None
            self._client = httpx.AsyncClient(
                verify=verify,
                follow_redirects=False,
                trust_env=False,
                timeout=httpx.Timeout(self.config.timeout + HTTPX_GRACE),
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client (at the end of the session)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def fetch(self, url: str) -> Fetched:
        """Fetch `url`: FetchRefused for what the guard refuses, FetchFailed for the rest."""
        limit = self.config.timeout
        try:
            async with asyncio.timeout(limit):
                return await self._follow(url)
        except TimeoutError:
            raise FetchFailed(
                f"Fetching {url} took longer than {limit:g} s (the [web] timeout), so it was "
                "stopped. The server may be slow or stuck; try again later or another source."
            ) from None

    async def _follow(self, url: str) -> Fetched:
        current = url
        hops = 0
        max_hops = min(self.config.max_redirects, MAX_REDIRECTS)
        while True:
            try:
                target = await self.guard.check(current)
            except FetchRefused as exc:
                if current == url:
                    raise
                raise FetchRefused(f"{url} redirects to {current}. {exc}") from None
            response = await self._open(target)
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECTS and location:
                    following = urljoin(current, location.strip())
                    hops += 1
                    if hops > max_hops:
                        raise FetchFailed(
                            f"Too many redirects while fetching {url} (the limit is "
                            f"{max_hops}); the last one pointed to {following}."
                        )
                    if not same_site(current, following):
                        try:
                            self.guard.precheck(following)
                        except FetchRefused as exc:
                            raise FetchRefused(f"{url} redirects to {following}. {exc}") from None
                        return Fetched(url, current, response.status_code, "", None, b"", following)
                    current = following
                    continue
                if response.status_code >= 400:
                    reason = response.reason_phrase or ""
                    raise FetchFailed(
                        f"Failed to fetch {current}: HTTP {response.status_code} {reason}".rstrip()
                        + ". Check the URL, or look for the page elsewhere.",
                        response.status_code,
                    )
                media_type, charset = _media_type(response.headers.get("content-type", ""))
                body = await self._read(response, current)
                return Fetched(url, current, response.status_code, media_type, charset, body)
            finally:
                await response.aclose()

    async def _open(self, target: Target) -> httpx.Response:
        """Send the request to the checked addresses in turn until one answers."""
        import httpx

        client = self._http()
        headers = {
            "Host": target.host_header,
            "User-Agent": self.config.user_agent,
            "Accept": ACCEPT,
        }
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        problem: Exception | None = None
        for address in target.addresses:
            pinned = httpx.URL(target.url).copy_with(host=str(address), fragment=None)
            request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
            try:
                return await client.send(request, stream=True)
            except httpx.ConnectError as exc:
                if "CERTIFICATE_VERIFY_FAILED" in str(exc):
                    raise FetchFailed(
                        f"The TLS certificate of {target.host} could not be verified, so "
                        f"{target.url} was not fetched ({exc}). The site may be misconfigured "
                        "or impersonated; do not work around it."
                    ) from exc
                problem = exc
            except httpx.TimeoutException as exc:
                raise FetchFailed(
                    f"{target.url} did not answer within {self.config.timeout:g} s."
                ) from exc
            except httpx.HTTPError as exc:
                raise FetchFailed(
                    f"Failed to fetch {target.url} due to a network error: {_said(exc)}."
                ) from exc
        raise FetchFailed(
            f"Cannot connect to {target.host} for {target.url} ({problem}). The server may be "
            "down; check the address or try again later."
        )

    async def _read(self, response: httpx.Response, url: str) -> bytes:
        """The body, refused as soon as it is known to pass `max_bytes` (before reading it
        when the server says its length)."""
        import httpx

        limit = self.config.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchFailed(_too_large(url, f"{int(declared):,} bytes", limit))
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise FetchFailed(_too_large(url, f"more than {limit:,} bytes", limit))
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise FetchFailed(
                f"The connection broke while reading {url} ({_said(exc)}); try again."
            ) from exc
        return b"".join(chunks)


def _said(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _too_large(url: str, size: str, limit: int) -> str:
    return (
        f"The response from {url} is too large: {size}, over the {limit:,}-byte limit "
        "([web] max_bytes), so it was not read. Look for a smaller page (a summary, an API, "
        "a raw text version)."
    )


__all__ = ["FetchFailed", "FetchRefused", "Fetched", "Fetcher", "same_site"]
