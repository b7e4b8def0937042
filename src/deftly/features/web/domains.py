"""Permission rules by domain, as other agents write them: `FetchURL(domain:example.com)`.

A `domain:` pattern covers its host and every host under it (`domain:example.com` covers
`docs.example.com`), case-insensitively; with glob characters it is a glob on the host
(`domain:*.example.com` covers only the hosts under it). Any other pattern is a glob on
the whole URL (`FetchURL(https://docs.python.org/*)`). The rule a person approves "for
this session" is the call's domain.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from deftly.policy.rules import escape_subject, glob_matches, text_matches

DOMAIN_PREFIX = "domain:"
_GLOB = frozenset("*?[]{}")


def domain_rule(tool: str, host: str) -> str:
    """The rule for every call of `tool` to `host`."""
    return f"{tool}({DOMAIN_PREFIX}{escape_subject(host)})"


def domain_matches(host: str, pattern: str) -> bool:
    """Whether a `domain:` pattern (without its prefix) covers `host`; `!` negates."""
    host = host.rstrip(".").lower()
    negate = pattern.startswith("!")
    body = (pattern[1:] if negate else pattern).strip().rstrip(".").lower()
    if any(ch in _GLOB for ch in body.replace("\\\\", "")):
        hit = text_matches(host, body, ignore_case=True)
    else:
        plain = body.replace("\\", "")
        with contextlib.suppress(UnicodeError):
            plain = plain.encode("idna").decode("ascii")
        hit = bool(plain) and (host == plain or host.endswith("." + plain))
    return hit != negate


def url_rule_matcher(url: str, host: str) -> Callable[[str], bool]:
    """A FetchURL call's rule matcher: `domain:` patterns on its host, others on its URL."""

    def matches(pattern: str) -> bool:
        if pattern.startswith(DOMAIN_PREFIX):
            return domain_matches(host, pattern[len(DOMAIN_PREFIX) :])
        return glob_matches(url, pattern)

    return matches
