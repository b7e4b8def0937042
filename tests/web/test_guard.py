"""The address guard: refused networks (a property test), names, literals, what
allow_hosts and allow_private open, and resolving once per check (the address checked is
the address used)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deftly.features.web.guard import (
    REFUSED_NETWORKS,
    AddressGuard,
    FetchRefused,
    IPAddress,
    embedded_ipv4,
    refused_network,
)
from tests.web.conftest import FakeDns

V4_REFUSED = [n for n in REFUSED_NETWORKS if n.version == 4]
PUBLIC_NETWORKS = [
    ipaddress.ip_network(n)
    for n in (
        "1.1.1.0/24",
        "8.0.0.0/9",
        "52.0.0.0/10",
        "93.184.216.0/24",
        "151.101.0.0/16",
        "2001:4860::/32",
        "2606:4700::/32",
        "2a00:1450::/32",
    )
]


def _in(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> st.SearchStrategy[IPAddress]:
    return st.ip_addresses(network=network)


refused_addresses = st.sampled_from(REFUSED_NETWORKS).flatmap(_in)
public_addresses = st.sampled_from(PUBLIC_NETWORKS).flatmap(_in)


@given(refused_addresses)
def test_every_address_in_a_refused_network_is_refused(address: IPAddress) -> None:
    assert refused_network(address) is not None


@given(st.sampled_from(V4_REFUSED).flatmap(_in))
def test_an_ipv6_address_carrying_a_refused_ipv4_one_is_refused(
    address: ipaddress.IPv4Address,
) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(address))
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80))
    for wrapped in (mapped, nat64, six_to_four):
        assert embedded_ipv4(wrapped) == address
        assert refused_network(wrapped) is not None


@given(public_addresses)
def test_public_addresses_pass(address: IPAddress) -> None:
    assert refused_network(address) is None


@given(public_addresses.filter(lambda a: a.version == 4))
def test_a_public_ipv4_address_mapped_into_ipv6_passes(address: ipaddress.IPv4Address) -> None:
    assert refused_network(ipaddress.IPv6Address(f"::ffff:{address}")) is None


@given(refused_addresses)
async def test_a_host_resolving_to_any_refused_address_is_refused(address: IPAddress) -> None:
    public = ipaddress.ip_address("93.184.216.34")
    guard = AddressGuard(resolver=FakeDns({"mixed.test": [[public, address]]}))
    with pytest.raises(FetchRefused, match="resolves to"):
        await guard.check("https://mixed.test/")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1337/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://0.0.0.0:8080/",
        "http://[fe80::1%25eth0]/",
    ],
)
def test_private_literals_are_refused_without_resolving(url: str) -> None:
    dns = FakeDns()
    with pytest.raises(FetchRefused, match="private, local or reserved"):
        AddressGuard(resolver=dns).precheck(url)
    assert dns.asked == []


@pytest.mark.parametrize(
    "url", ["http://localhost:1337/", "http://ev1l.localhost/", "http://LOCALHOST./"]
)
def test_local_names_are_refused_without_resolving(url: str) -> None:
    with pytest.raises(FetchRefused, match="names this machine"):
        AddressGuard().precheck(url)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("file:///etc/passwd", '"file:"'),
        ("ftp://example.com/x", '"ftp:"'),
        ("example.com/page", "no scheme"),
        ("https://user:secret@example.com/", "user name or password"),
        ("http:///nohost", "names no host"),
        ("http://example.com:99999/", "not a valid URL"),
    ],
)
def test_what_is_not_an_http_url_is_refused(url: str, said: str) -> None:
    with pytest.raises(FetchRefused, match=said):
        AddressGuard().precheck(url)


async def test_a_name_is_resolved_once_and_its_addresses_are_the_target() -> None:
    first = ipaddress.ip_address("93.184.216.34")
    later = ipaddress.ip_address("127.0.0.1")
    dns = FakeDns({"example.com": [[first], [later]]})
    target = await AddressGuard(resolver=dns).check("https://Example.COM./a?b=1")
    assert dns.asked == ["example.com"]
    assert target.addresses == (first,)
    assert (target.host, target.port, target.host_header) == ("example.com", 443, "example.com")


async def test_a_failed_lookup_fails_closed() -> None:
    async def broken(host: str, port: int) -> list[IPAddress]:
        raise OSError("Name or service not known")

    with pytest.raises(FetchRefused, match=r'Cannot resolve the host "nowhere\.test"'):
        await AddressGuard(resolver=broken).check("http://nowhere.test/")


async def test_allow_hosts_opens_names_addresses_and_networks() -> None:
    private = ipaddress.ip_address("10.1.2.3")
    dns = FakeDns({"wiki.corp": [[private]], "other.corp": [[private]]})
    guard = AddressGuard(["*.corp", "127.0.0.1", "192.168.5.0/24"], resolver=dns)
    assert (await guard.check("http://wiki.corp/")).addresses == (private,)
    assert (await guard.check("http://127.0.0.1:8000/")).host_header == "127.0.0.1:8000"
    assert (await guard.check("http://192.168.5.9/")).port == 80
    with pytest.raises(FetchRefused):
        await guard.check("http://127.0.0.2/")
    with pytest.raises(FetchRefused):
        await guard.check("http://192.168.6.1/")


async def test_allow_private_lets_every_address_through() -> None:
    guard = AddressGuard(allow_private=True, resolver=FakeDns())
    target = await guard.check("http://127.0.0.1:9/")
    assert target.addresses == (ipaddress.ip_address("127.0.0.1"),)
    guard.precheck("http://localhost/")
    with pytest.raises(FetchRefused, match='"file:"'):
        guard.precheck("file:///etc/passwd")
