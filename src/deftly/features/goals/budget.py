"""Goal budgets: the units SetGoalBudget takes, and the turn budget the loop asks."""

from __future__ import annotations

from typing import Literal

from deftly.contract.records import frozen

BudgetUnit = Literal["turns", "tokens", "milliseconds", "seconds", "minutes", "hours"]

MS_PER_UNIT: dict[str, int] = {
    "milliseconds": 1,
    "seconds": 1000,
    "minutes": 60_000,
    "hours": 3_600_000,
}
MIN_WALL_MS = 1000
"""Below a second a wall-time budget cannot be meant."""
MAX_WALL_MS = 86_400_000
"""Above a day neither."""


@frozen
class BudgetLimit:
    """A parsed budget: which measure (`turns`, `tokens`, `wall_ms`), its limit, and how to
    say it (`5 turns`, `30 minutes`)."""

    measure: Literal["turns", "tokens", "wall_ms"]
    limit: int
    text: str


def _number(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _say(value: float, unit: str) -> str:
    return f"{_number(value)} {unit[:-1] if value == 1 else unit}"


def parse_budget(value: float, unit: BudgetUnit) -> BudgetLimit | None:
    """The limit `value unit` sets, or None when it is not a reasonable goal budget (a
    time outside one second to one day). Counts are rounded, at least 1."""
    if unit in ("turns", "tokens"):
        count = max(1, round(value))
        return BudgetLimit(unit, count, _say(count, unit))
    ms = round(value * MS_PER_UNIT[unit])
    if not MIN_WALL_MS <= ms <= MAX_WALL_MS:
        return None
    return BudgetLimit("wall_ms", ms, _say(value, unit))


def unreasonable(value: float, unit: BudgetUnit) -> str:
    """What SetGoalBudget says to a budget `parse_budget` refused."""
    return (
        f"Goal budget not set: {_say(value, unit)} is not a reasonable goal budget. "
        "Use a time between 1 second and 24 hours, or a budget in turns or tokens."
    )
