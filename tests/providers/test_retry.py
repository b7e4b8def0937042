"""The retry policy: which errors are tried again, and how long to wait."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from deftly.providers import ProviderError, RetryPolicy


@given(attempt=st.integers(1, 40), seed=st.integers(0, 2**32))
def test_backoff_grows_then_caps_with_bounded_jitter(attempt: int, seed: int) -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=32, jitter=0.25)
    error = ProviderError("busy", kind="server")
    delay = policy.delay(error, attempt, random.Random(seed))
    backoff = min(0.5 * 2 ** (attempt - 1), 32)
    assert backoff <= delay <= backoff * 1.25


def test_retry_after_wins_and_is_capped() -> None:
    policy = RetryPolicy(max_delay=10)
    assert policy.delay(ProviderError("slow down", kind="rate_limit", retry_after=3), 1) == 3
    assert policy.delay(ProviderError("slow down", kind="rate_limit", retry_after=99), 1) == 10


def test_only_retryable_errors_and_only_so_many_times() -> None:
    policy = RetryPolicy(max_attempts=3)
    busy = ProviderError("busy", kind="overloaded")
    assert policy.should_retry(busy, 1) and policy.should_retry(busy, 2)
    assert not policy.should_retry(busy, 3)
    for kind in ("auth", "not_found", "bad_request", "quota", "filtered", "context_overflow"):
        assert not policy.should_retry(ProviderError("no", kind=kind), 1)  # type: ignore[arg-type]


def test_an_unreachable_server_gets_few_tries() -> None:
    policy = RetryPolicy(max_attempts=8, max_connection_attempts=4)
    down = ProviderError("nothing answers", kind="connection")
    assert policy.should_retry(down, 3) and not policy.should_retry(down, 4)
    assert policy.should_retry(ProviderError("busy", kind="server"), 7)
