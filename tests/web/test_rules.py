"""Permission rules by domain: `FetchURL(domain:...)` patterns, what manual mode asks,
what a session approval covers, and deny and allow rules from the configuration."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from deftly.features.web.domains import domain_matches, domain_rule, url_rule_matcher
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.web.conftest import FakeDns
from tests.web.server import WebServer

LOOPBACK = ipaddress.ip_address("127.0.0.1")


@pytest.mark.parametrize(
    ("host", "pattern", "hit"),
    [
        ("example.com", "example.com", True),
        ("docs.example.com", "example.com", True),
        ("EXAMPLE.com", "Example.COM.", True),
        ("notexample.com", "example.com", False),
        ("example.com.evil.net", "example.com", False),
        ("example.com", "*.example.com", False),
        ("a.b.example.com", "*.example.com", True),
        ("example.org", "!example.com", True),
        ("example.com", "!example.com", False),
        ("xn--bcher-kva.example", "bücher.example", True),
        ("anything.test", "*", True),
    ],
)
def test_domain_patterns(host: str, pattern: str, hit: bool) -> None:
    assert domain_matches(host, pattern) is hit


def test_other_patterns_are_globs_on_the_url() -> None:
    matches = url_rule_matcher("https://docs.python.org/3/library/asyncio.html", "docs.python.org")
    assert matches("https://docs.python.org/*")
    assert matches("domain:python.org")
    assert not matches("https://docs.python.org/2/*")
    assert domain_rule("FetchURL", "docs.python.org") == "FetchURL(domain:docs.python.org)"


class Recorder:
    """Answers every approval request with `answer`, and keeps the requests."""

    def __init__(self, answer: ApprovalResponse) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked.append(request)
        return self.answer


async def test_manual_mode_asks_by_domain_and_a_session_approval_covers_the_domain(
    web_runtime: Any, site: WebServer
) -> None:
    dns = FakeDns({"docs.site.test": [[LOOPBACK]], "other.test": [[LOOPBACK]]})
    approver = Recorder(ApprovalResponse("approve_session"))
    rt = await web_runtime(dns=dns, mode="manual", approve_asks=False, approver=approver)
    first = await rt.call("FetchURL", {"url": site.url("/plain", host="docs.site.test")})
    assert not first.is_error, first.text
    [request] = approver.asked
    assert request.approval_rule == "FetchURL(domain:docs.site.test)"
    assert request.tool == "FetchURL"
    again = await rt.call("FetchURL", {"url": site.url("/notes.md", host="docs.site.test")})
    assert not again.is_error
    assert len(approver.asked) == 1  # the same domain: approved for the session
    other = await rt.call("FetchURL", {"url": site.url("/plain", host="other.test")})
    assert not other.is_error
    assert [r.approval_rule for r in approver.asked][1:] == ["FetchURL(domain:other.test)"]


async def test_a_rejected_fetch_sends_nothing(web_runtime: Any, site: WebServer) -> None:
    approver = Recorder(ApprovalResponse("reject", feedback="not that site"))
    rt = await web_runtime(mode="manual", approve_asks=False, approver=approver)
    result = await rt.call("FetchURL", {"url": site.url("/plain")})
    assert result.is_error
    assert site.requests == []


async def test_a_deny_rule_on_a_domain_stops_its_subdomains_unasked(
    web_runtime: Any, site: WebServer
) -> None:
    dns = FakeDns({"api.blocked.test": [[LOOPBACK]]})
    approver = Recorder(ApprovalResponse("approve"))
    rt = await web_runtime(
        dns=dns,
        mode="yolo",
        approve_asks=False,
        approver=approver,
        config={"permissions": {"deny": ["FetchURL(domain:blocked.test)"]}},
    )
    result = await rt.call("FetchURL", {"url": site.url("/plain", host="api.blocked.test")})
    assert result.is_error
    assert "FetchURL(domain:blocked.test)" in result.text
    assert approver.asked == [] and site.requests == []


async def test_an_allow_rule_lets_a_domain_or_a_url_pattern_run_unasked(
    web_runtime: Any, site: WebServer
) -> None:
    dns = FakeDns({"docs.site.test": [[LOOPBACK]]})
    approver = Recorder(ApprovalResponse("reject"))
    rules = ["FetchURL(domain:site.test)", f"FetchURL(http://127.0.0.1:{site.port}/data.*)"]
    rt = await web_runtime(
        dns=dns,
        mode="manual",
        approve_asks=False,
        approver=approver,
        config={"permissions": {"allow": rules}},
    )
    by_domain = await rt.call("FetchURL", {"url": site.url("/plain", host="docs.site.test")})
    by_url = await rt.call("FetchURL", {"url": site.url("/data.json")})
    assert not by_domain.is_error and not by_url.is_error
    assert approver.asked == []
    await rt.call("FetchURL", {"url": site.url("/plain")})  # neither rule covers it
    assert len(approver.asked) == 1


async def test_a_refused_url_fails_before_anyone_is_asked(web_runtime: Any) -> None:
    approver = Recorder(ApprovalResponse("approve"))
    rt = await web_runtime(
        {"allow_hosts": []}, mode="manual", approve_asks=False, approver=approver
    )
    for url in ("http://127.0.0.1/", "file:///etc/passwd", "http://localhost:8080/"):
        result = await rt.call("FetchURL", {"url": url})
        assert result.is_error
    assert approver.asked == []
