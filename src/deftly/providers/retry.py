"""When to try a failed model request again: exponential backoff with jitter, honouring the
server's Retry-After."""

from __future__ import annotations

import random
from dataclasses import dataclass

from deftly.providers.base import ProviderError

_RANDOM = random.Random()


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Up to `max_attempts` tries of one request; the wait before try n+1 is the server's
    Retry-After when it sent one (capped at `max_delay`), else `base_delay * 2**n` capped
    at `max_delay`, plus up to `jitter` of it at random."""

    max_attempts: int = 8
    base_delay: float = 0.5
    max_delay: float = 32.0
    jitter: float = 0.25

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        """Whether to try again after `attempt` (1-based) failed with `error`."""
        return error.retryable and attempt < self.max_attempts

    def delay(self, error: ProviderError, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after `attempt` (1-based) failed."""
        if error.retry_after is not None:
            return max(0.0, min(error.retry_after, self.max_delay))
        backoff = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        draw: float = (rng or _RANDOM).random()
        return backoff + backoff * self.jitter * draw
