"""A cron expression said in words, for the `humanSchedule:` line a model reads back.

Only the common shapes are put in words ("every 5 minutes", "at 09:00 on weekdays");
anything else is shown as the expression itself, which is never wrong.
"""

from __future__ import annotations

import calendar
import re

from deftly.features.cron.expression import CronSyntaxError, parse

_NUMBER = re.compile(r"\d+")
_EVERY = re.compile(r"\*/(\d+)")
WEEKDAYS = frozenset({1, 2, 3, 4, 5})
WEEKEND = frozenset({0, 6})
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def cron_to_human(text: str) -> str:
    """The schedule in words, or the (normalised) expression when it has no simple wording
    or does not parse."""
    try:
        expr = parse(text)
    except CronSyntaxError:
        return text
    minute, hour, day, month, weekday = expr.fields
    raw = expr.text
    if (day, month) != ("*", "*"):
        if weekday == "*" and _single(minute, hour, day, month):
            name = calendar.month_name[int(month)]
            return f"at {_clock(hour, minute)} on day {int(day)} of {name}"
        return raw
    if hour == "*" and weekday == "*":
        return _every_hour(minute) or raw
    if weekday == "*" and _single(minute):
        every = _EVERY.fullmatch(hour)
        if every and 24 % int(every.group(1)) == 0 and int(every.group(1)) > 0:
            step = int(every.group(1))
            if step == 1:
                return f"at minute {int(minute)} of every hour"
            return f"every {step} hours at minute {int(minute):02d}"
    if not _single(minute, hour):
        return raw
    at = _clock(hour, minute)
    if weekday == "*":
        return f"at {at} every day"
    days = expr.weekdays
    if days == WEEKDAYS:
        return f"at {at} on weekdays"
    if days == WEEKEND:
        return f"at {at} on weekends"
    return f"at {at} on " + ", ".join(DAY_NAMES[d] for d in sorted(days))


def _every_hour(minute: str) -> str | None:
    """The words for a schedule restricted in its minute field only."""
    if minute == "*":
        return "every minute"
    every = _EVERY.fullmatch(minute)
    if every:
        step = int(every.group(1))
        if step == 1:
            return "every minute"
        if step > 0 and 60 % step == 0:
            return f"every {step} minutes"
        return None
    if _single(minute):
        return f"at minute {int(minute)} of every hour"
    return None


def _single(*fields: str) -> bool:
    return all(_NUMBER.fullmatch(f) for f in fields)


def _clock(hour: str, minute: str) -> str:
    return f"{int(hour):02d}:{int(minute):02d}"
