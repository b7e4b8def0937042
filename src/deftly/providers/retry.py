"""When to try a failed model request again: exponential backoff with jitter, honouring the
server's Retry-After."""

from __future__ import annotations

import random

from deftly.contract.records import frozen
from deftly.providers.base import ProviderError

_RANDOM = random.Random()


@frozen
class RetryPolicy:
    """Up to `max_attempts` tries of one request; the wait before try n+1 is the server's
    Retry-After when it sent one (capped at `max_delay`), else `base_delay * 2**n` capped
    at `max_delay`, plus up to `jitter` of it at random. A server that cannot be reached
    at all gets only `max_connection_attempts` tries (about 3.5 s of waiting): one that is
    down rarely comes back within the minute the other kinds may wait, and the person
    should hear at once that nothing answers at the URL."""

    max_attempts: int = 8
    max_connection_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 32.0
    jitter: float = 0.25

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        """Whether to try again after `attempt` (1-based) failed with `error`."""
        limit = self.max_attempts
        if error.kind == "connection":
            limit = min(limit, self.max_connection_attempts)
        return error.retryable and attempt < limit

    def delay(self, error: ProviderError, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after `attempt` (1-based) failed."""
        if error.retry_after is not None:
            return max(0.0, min(error.retry_after, self.max_delay))
        backoff = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        draw: float = (rng or _RANDOM).random()
        return backoff + backoff * self.jitter * draw
