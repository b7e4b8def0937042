"""Cron expressions: the five-field grammar, checked here, and the next fire, from croniter.

The grammar is the classic one and nothing more: `minute hour day-of-month month
day-of-week`, each a comma list of `*`, `N`, `A-B`, `*/S`, `N/S` (N to the field's end, step
S) or `A-B/S`, digits only. Names (`MON`, `JAN`), macros (`@daily`), `?`, `L`, `W`, `#` and
a seconds field are refused, each with a message naming the field and what is wrong. In the
day-of-week field `7` is Sunday, like `0`.

The check is ours so the messages can say what to fix; croniter then computes the fires,
from a canonical form of the expression (explicit value lists) so no croniter extension
changes the meaning. Day-of-month and day-of-week follow Vixie cron: a field counts as
unrestricted only when it is literally `*`; when both are restricted a day matches if
*either* does. Fires are computed in local time (`zone.local_zone()`), so a daily job at
09:00 stays at 09:00 across a DST change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, tzinfo
from typing import Any, cast

from deftly.contract.records import frozen
from deftly.features.cron.zone import local_zone

DAY = 86_400.0
HORIZON_YEARS = 5
"""A job must fire within this many years (of 366 days) to be scheduled."""

_DIGITS = re.compile(r"\d+")
_UNSUPPORTED_HINT = (
    " (names such as MON or JAN, macros such as @daily, and the characters ?, L, W and # "
    "are not supported)"
)


@frozen
class CronField:
    """One of the five fields: its name and the values it allows."""

    name: str
    low: int
    high: int


FIELDS = (
    CronField("minute", 0, 59),
    CronField("hour", 0, 23),
    CronField("day-of-month", 1, 31),
    CronField("month", 1, 12),
    CronField("day-of-week", 0, 7),
)
FIELD_NAMES = " ".join(f.name for f in FIELDS)


class CronSyntaxError(ValueError):
    """An expression that is not in the grammar; `field` names the field at fault (None when
    the whole expression is: empty, or not five fields)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def normalise(text: str) -> str:
    """The expression with its whitespace tidied: trimmed, runs of blanks made one space."""
    return " ".join(text.split())


@frozen
class CronExpression:
    """A parsed expression: its normalised text and the values each field allows."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    """0 is Sunday (a `7` in the expression is stored as 0)."""
    any_day: bool
    """The day-of-month field is literally `*`."""
    any_weekday: bool
    """The day-of-week field is literally `*`."""

    @property
    def fields(self) -> list[str]:
        """The five field texts as written (normalised)."""
        return self.text.split(" ")

    def matches(self, when: datetime) -> bool:
        """Whether a fire falls on `when`'s minute (read in `when`'s own zone)."""
        weekday = (when.weekday() + 1) % 7  # Python: Monday=0; cron: Sunday=0
        if when.minute not in self.minutes or when.hour not in self.hours:
            return False
        if when.month not in self.months:
            return False
        return self._day_matches(when.day, weekday)

    def _day_matches(self, day: int, weekday: int) -> bool:
        on_day, on_weekday = day in self.days, weekday in self.weekdays
        if self.any_day and self.any_weekday:
            return True
        if self.any_day:
            return on_weekday
        if self.any_weekday:
            return on_day
        return on_day or on_weekday

    def next_fire(
        self, after: float, *, years: int = HORIZON_YEARS, zone: tzinfo | None = None
    ) -> float | None:
        """The first fire strictly after `after` (epoch seconds; fires are on whole
        minutes), or None when there is none within `years` years of 366 days."""
        from croniter import CroniterBadDateError, croniter  # when a job is scheduled

        zone = zone or local_zone()
        start = datetime.fromtimestamp(after, zone)
        found: list[float] = []
        for form in self._croniter_forms():
            try:
                fire = croniter(form, start, max_years_between_matches=years).get_next(datetime)
            except CroniterBadDateError:
                continue
            found.append(cast(datetime, fire).timestamp())
        if not found:
            return None
        first = min(found)
        return first if after < first <= after + years * 366 * DAY else None

    def fires(self, after: float, *, zone: tzinfo | None = None) -> Iterator[float]:
        """Every fire strictly after `after`, in order, lazily (no horizon: the caller
        stops). One croniter iterator per form, merged."""
        from croniter import croniter

        start = datetime.fromtimestamp(after, zone or local_zone())
        heads: dict[int, float] = {}
        iterators = {}
        for index, form in enumerate(self._croniter_forms()):
            iterators[index] = croniter(form, start, max_years_between_matches=HORIZON_YEARS)
        for index in list(iterators):
            _advance(iterators, heads, index)
        while heads:
            first = min(heads.values())
            yield first
            for index in [i for i, value in heads.items() if value == first]:
                _advance(iterators, heads, index)

    def _croniter_forms(self) -> list[str]:
        """croniter expressions whose union is this one: explicit value lists, and the OR of
        two restricted day fields as two expressions (croniter's own rule for "wildcard"
        differs from Vixie cron's)."""
        minute, hour, month = (_listed(v) for v in (self.minutes, self.hours, self.months))
        day = "*" if self.any_day else _listed(self.days)
        weekday = "*" if self.any_weekday else _listed(self.weekdays)
        if self.any_day or self.any_weekday:
            return [f"{minute} {hour} {day} {month} {weekday}"]
        return [f"{minute} {hour} {day} {month} *", f"{minute} {hour} * {month} {weekday}"]


def _advance(iterators: dict[int, Any], heads: dict[int, float], index: int) -> None:
    """Move one form's iterator on; a form with no further fire drops out."""
    from croniter import CroniterBadDateError

    try:
        heads[index] = float(iterators[index].get_next(float))
    except CroniterBadDateError:
        heads.pop(index, None)


def _listed(values: frozenset[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def parse(text: str) -> CronExpression:
    """Parse an expression (whitespace is normalised first); `CronSyntaxError` says what is
    wrong, naming the field."""
    tidy = normalise(text)
    if not tidy:
        raise CronSyntaxError(
            f'the cron expression is empty: write five fields, {FIELD_NAMES}, such as "*/5 * * * *"'
        )
    parts = tidy.split(" ")
    if len(parts) == 1 and parts[0].startswith("@"):
        raise CronSyntaxError(
            f'"{parts[0]}" is a macro, and macros are not supported: write the five fields '
            'instead (@daily is "0 0 * * *")'
        )
    if len(parts) != len(FIELDS):
        raise CronSyntaxError(
            f"a cron expression has exactly 5 fields ({FIELD_NAMES}); this one has {len(parts)}"
        )
    values = [_parse_field(part, field) for part, field in zip(parts, FIELDS, strict=True)]
    weekdays = frozenset(0 if v == 7 else v for v in values[4])
    return CronExpression(
        tidy,
        values[0],
        values[1],
        values[2],
        values[3],
        weekdays,
        any_day=parts[2] == "*",
        any_weekday=parts[4] == "*",
    )


def _parse_field(text: str, field: CronField) -> frozenset[int]:
    values: set[int] = set()
    for term in text.split(","):
        if not term:
            raise CronSyntaxError(
                f'the {field.name} field "{text}" has an empty term in its list (a comma too '
                "many): remove it",
                field.name,
            )
        values.update(_parse_term(term, field))
    return frozenset(values)


def _parse_term(term: str, field: CronField) -> range:
    base, slash, step_text = term.partition("/")
    step = 1
    if slash:
        if not step_text:
            raise CronSyntaxError(
                f'the {field.name} field\'s step is empty in "{term}": put a number after "/"',
                field.name,
            )
        step = _number(step_text, field, "step")
        if step == 0:
            raise CronSyntaxError(
                f'the {field.name} field\'s step must be 1 or more (got "{step_text}")',
                field.name,
            )
        if not base:
            raise CronSyntaxError(
                f'the {field.name} field\'s step in "{term}" has nothing to step through: '
                'write "*/S", "N/S" or "A-B/S"',
                field.name,
            )
    if base == "*":
        return range(field.low, field.high + 1, step)
    low_text, dash, high_text = base.partition("-")
    if not dash:
        value = _number(base, field, "value")
        _check_value(value, field)
        return range(value, field.high + 1, step) if slash else range(value, value + 1)
    low = _number(low_text, field, "range start")
    high = _number(high_text, field, "range end")
    if not field.low <= low <= high <= field.high:
        raise CronSyntaxError(
            f"the {field.name} field's range {low}-{high} is not valid: both ends must be "
            f"within {field.low}..{field.high}, the first no larger than the second",
            field.name,
        )
    return range(low, high + 1, step)


def _number(text: str, field: CronField, what: str) -> int:
    if not _DIGITS.fullmatch(text) or not text.isascii():
        hint = _UNSUPPORTED_HINT if any(c.isalpha() or c in "?#" for c in text) else ""
        raise CronSyntaxError(
            f'the {field.name} field\'s {what} "{text}" is not a plain number: use digits '
            f"only{hint}",
            field.name,
        )
    return int(text)


def _check_value(value: int, field: CronField) -> None:
    if not field.low <= value <= field.high:
        raise CronSyntaxError(
            f"the {field.name} field's value {value} is out of range: it must be within "
            f"{field.low}..{field.high}",
            field.name,
        )
