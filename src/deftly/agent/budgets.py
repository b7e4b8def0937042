"""The turn budgets of `[loop]`: tokens and wall time. Each is a `TurnBudget`, asked before
every step; others (a goal's budget) plug in the same way."""

from __future__ import annotations

from deftly.config.models import LoopConfig
from deftly.contract.records import frozen
from deftly.providers.types import Usage


@frozen
class TokenBudget:
    """At most `tokens` (prompt plus reply, over the turn's requests)."""

    tokens: int

    def exceeded(self, *, steps: int, usage: Usage, seconds: float) -> str | None:
        """Why the turn must end, or None."""
        if usage.total_tokens < self.tokens:
            return None
        return (
            f"The turn used {usage.total_tokens:,} tokens, its budget of {self.tokens:,} "
            "([loop] max_turn_tokens), so it was ended. Summarise where you are if the user "
            "asks you to go on."
        )


@frozen
class TimeBudget:
    """At most `seconds` of wall time."""

    seconds: float

    def exceeded(self, *, steps: int, usage: Usage, seconds: float) -> str | None:
        """Why the turn must end, or None."""
        if seconds < self.seconds:
            return None
        return (
            f"The turn ran for {seconds:.0f} s, its budget of {self.seconds:g} s "
            "([loop] max_turn_seconds), so it was ended. Summarise where you are if the user "
            "asks you to go on."
        )


def configured_budgets(loop: LoopConfig) -> list[TokenBudget | TimeBudget]:
    """The budgets `[loop]` sets."""
    found: list[TokenBudget | TimeBudget] = []
    if loop.max_turn_tokens:
        found.append(TokenBudget(loop.max_turn_tokens))
    if loop.max_turn_seconds:
        found.append(TimeBudget(loop.max_turn_seconds))
    return found
