"""The address guard: FetchURL reaches public http(s) addresses only, unless `[web]` says so.

A URL passes in two steps. `precheck` needs no I/O (resolve time): the scheme, no user
name or password, no `localhost` name, no private IP literal. `check` (execute time, and
again for every redirect) resolves the host and refuses it when any of its addresses lies
in a refused network. The fetch then connects to exactly the addresses checked here
(`Target.addresses`), never resolving the name again, so a DNS answer that changes between
the check and the connection (DNS rebinding) cannot reach a private address.

An IPv6 address that carries an IPv4 one (`::ffff:127.0.0.1`, NAT64 `64:ff9b::/96`, 6to4
`2002::/16`) is judged by the IPv4 address inside it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeAlias
from urllib.parse import SplitResult, urlsplit

from deftly.contract.records import frozen

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

REFUSED_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # carrier-grade NAT (Alibaba's metadata service is here)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, cloud metadata (169.254.169.254)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast
        "::/96",  # unspecified, loopback, IPv4-compatible
        "100::/64",  # discard
        "2001::/32",  # Teredo tunnels
        "fc00::/7",  # unique local (fd00::/8, AWS metadata fd00:ec2::254)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
"""Where FetchURL never connects unless `[web] allow_hosts` or `allow_private` says so."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}

Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[IPAddress]]]
"""Host name and port -> its addresses (the system's resolver, or a test's)."""


class FetchRefused(Exception):
    """A URL the guard will not fetch; the message says why and what to do instead."""


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return address.sixtofour
    return None


def refused_network(address: IPAddress) -> IPNetwork | None:
    """The refused network `address` lies in (judging an embedded IPv4 address by its own
    networks), or None when it is public."""
    inner = embedded_ipv4(address)
    candidates: tuple[IPAddress, ...] = (address,) if inner is None else (inner, address)
    for candidate in candidates:
        for network in REFUSED_NETWORKS:
            if candidate.version == network.version and candidate in network:
                return network
    return None


def parse_address(text: str) -> IPAddress | None:
    """`text` as an IP address (a zone id such as `%eth0` dropped), or None."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolves `host` to, in its order, each once."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    found: list[IPAddress] = []
    for info in infos:
        address = parse_address(str(info[4][0]))
        if address is not None and address not in found:
            found.append(address)
    return found


@frozen
class Target:
    """A URL that passed the guard: where to connect, and what to call the host there."""

    url: str
    scheme: str
    host: str
    """The host as the URL names it (lower case, IDNA-encoded, no brackets)."""
    port: int
    addresses: tuple[IPAddress, ...]
    """The addresses checked: the only ones the fetch may connect to."""

    @property
    def host_header(self) -> str:
        """The `Host` header for this URL (the port only when it is not the default)."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return shown if self.port == _DEFAULT_PORTS[self.scheme] else f"{shown}:{self.port}"


@frozen
class _Parsed:
    url: str
    scheme: str
    host: str
    port: int


def url_host(url: str) -> str | None:
    """The host of `url` as rules and the guard compare it (lower case, IDNA, no trailing
    dot), or None when it has none."""
    try:
        return _parse(url).host
    except FetchRefused:
        return None


def _parse(url: str) -> _Parsed:
    text = url.strip()
    try:
        parts: SplitResult = urlsplit(text)
        port = parts.port
        raw_host = parts.hostname
    except ValueError as exc:
        raise FetchRefused(f'"{url}" is not a valid URL ({exc}).') from None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        shown = f'"{scheme}:"' if scheme else "no scheme"
        raise FetchRefused(
            f'"{url}" has {shown}: FetchURL fetches only http:// and https:// URLs. Write the '
            "full URL, e.g. https://example.com/page."
        )
    if parts.username is not None or parts.password is not None:
        raise FetchRefused(
            f'"{url}" carries a user name or password: FetchURL sends no credentials. Fetch '
            "the URL without them (pages behind a login need an authenticated tool)."
        )
    if not raw_host:
        raise FetchRefused(f'"{url}" names no host.')
    host = raw_host.rstrip(".").lower()
    if parse_address(host) is None:
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise FetchRefused(f'"{url}" has a host name that cannot be encoded.') from None
    return _Parsed(text, scheme, host, port or _DEFAULT_PORTS[scheme])


def _is_local_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


class AddressGuard:
    """Decides which URLs FetchURL may reach, and resolves the ones it may."""

    def __init__(
        self,
        allow_hosts: Iterable[str] = (),
        *,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.allow_private = allow_private
        self.resolver = resolver
        self._names: list[str] = []
        self._networks: list[IPNetwork] = []
        for entry in allow_hosts:
            text = entry.strip().lower().rstrip(".")
            try:
                self._networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                if text:
                    self._names.append(text)

    def _name_allowed(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host, pattern) for pattern in self._names)

    def _address_allowed(self, address: IPAddress) -> bool:
        return any(
            address.version == net.version and address in net for net in self._networks
        ) or self._name_allowed(str(address))

    def _refusal(self, address: IPAddress) -> IPNetwork | None:
        if self.allow_private or self._address_allowed(address):
            return None
        return refused_network(address)

    def precheck(self, url: str) -> _Parsed:
        """What can be refused without I/O: the scheme, credentials, a local host name, a
        private IP literal. Raises FetchRefused."""
        parsed = _parse(url)
        host = parsed.host
        if self.allow_private or self._name_allowed(host):
            return parsed
        literal = parse_address(host)
        if literal is not None:
            network = self._refusal(literal)
            if network is not None:
                raise FetchRefused(_private_message(url, f"{literal} is in {network}"))
        elif _is_local_name(host):
            raise FetchRefused(_private_message(url, f'"{host}" names this machine'))
        return parsed

    async def check(self, url: str) -> Target:
        """Resolve `url`'s host and check every address; raises FetchRefused."""
        parsed = self.precheck(url)
        literal = parse_address(parsed.host)
        if literal is not None:
            addresses: tuple[IPAddress, ...] = (literal,)
        else:
            try:
                addresses = tuple(await self.resolver(parsed.host, parsed.port))
            except (OSError, UnicodeError) as exc:
                raise FetchRefused(
                    f'Cannot resolve the host "{parsed.host}" of {url} ({exc}); check the address.'
                ) from None
            if not addresses:
                raise FetchRefused(f'The host "{parsed.host}" of {url} has no address.')
        if not self._name_allowed(parsed.host):
            for address in addresses:
                network = self._refusal(address)
                if network is not None:
                    raise FetchRefused(
                        _private_message(
                            url, f'"{parsed.host}" resolves to {address}, in {network}'
                        )
                    )
        return Target(parsed.url, parsed.scheme, parsed.host, parsed.port, addresses)


def _private_message(url: str, why: str) -> str:
    return (
        f"Refusing to fetch {url}: {why}, a private, local or reserved address. FetchURL "
        "reaches public addresses only; a person can allow a host in the configuration "
        "([web] allow_hosts) if it should be reachable."
    )
