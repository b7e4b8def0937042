"""The cron grammar (reference cases 57) and the next fire (58), in Berlin local time."""

from __future__ import annotations

import pytest

from deftly.features.cron.expression import CronSyntaxError, normalise, parse
from tests.cron.helpers import at, local


def test_the_full_wildcard_allows_every_value_and_leaves_both_day_fields_free() -> None:
    expr = parse("* * * * *")
    sizes = [len(s) for s in (expr.minutes, expr.hours, expr.days, expr.months)]
    assert sizes == [60, 24, 31, 12]
    assert expr.weekdays == frozenset(range(7))
    assert expr.any_day and expr.any_weekday


def test_ranges_steps_and_sunday_as_seven() -> None:
    assert parse("0 9-17 * * 1-5").hours == frozenset(range(9, 18))
    assert parse("*/5 * * * *").minutes == frozenset(range(0, 60, 5))
    assert parse("0-30/10 * * * *").minutes == {0, 10, 20, 30}
    assert parse("10/20 * * * *").minutes == {10, 30, 50}  # N/S: from N to the end
    assert parse("0 0 * * 7").weekdays == {0}
    assert parse("0 0 * * 5-7").weekdays == {5, 6, 0}
    assert parse("1,7,23 5,17 * * *").minutes == {1, 7, 23}


def test_whitespace_is_normalised() -> None:
    assert normalise("  */5\n*\t*\t*\t*  ") == "*/5 * * * *"
    assert parse("  */5\n*\t*\t*\t*  ").text == "*/5 * * * *"


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("* * * *", None, "5 fields"),
        ("* * * * * *", None, "5 fields"),
        ("", None, "empty"),
        ("   ", None, "empty"),
        ("@daily", None, "macro"),
        ("60 * * * *", "minute", "out of range"),
        ("0 24 * * *", "hour", "out of range"),
        ("0 0 32 * *", "day-of-month", "out of range"),
        ("0 0 0 * *", "day-of-month", "out of range"),
        ("0 0 * 13 *", "month", "out of range"),
        ("0 0 * * 8", "day-of-week", "out of range"),
        ("*/x * * * *", "minute", "step"),
        ("*/0 * * * *", "minute", "step must be 1 or more"),
        ("*/ * * * *", "minute", "step is empty"),
        ("/5 * * * *", "minute", "nothing to step through"),
        ("5-1 * * * *", "minute", "range 5-1"),
        ("0 0-24 * * *", "hour", "range 0-24"),
        ("1,,3 * * * *", "minute", "empty term"),
        ("1, * * * *", "minute", "empty term"),
        ("-5 * * * *", "minute", "digits only"),
        ("1e1 * * * *", "minute", "digits only"),
        ("0x10 * * * *", "minute", "digits only"),
        ("+5 * * * *", "minute", "digits only"),
        ("*/1e1 * * * *", "minute", "digits only"),
        ("1-1e1 * * * *", "minute", "digits only"),
        ("0 0 * * MON", "day-of-week", "names such as MON"),
        ("0 0 * JAN *", "month", "digits only"),
        ("0 0 ? * *", "day-of-month", "digits only"),
        ("0 0 L * *", "day-of-month", "digits only"),
        ("0 0 * * 1#2", "day-of-week", "digits only"),
        ("0 0 15W * *", "day-of-month", "digits only"),
    ],
)
def test_what_is_not_in_the_grammar_is_refused_naming_the_field(
    text: str, field: str | None, says: str
) -> None:
    with pytest.raises(CronSyntaxError) as caught:
        parse(text)
    assert caught.value.field == field
    assert says in str(caught.value)
    if field is not None:
        assert f"the {field} field" in str(caught.value)


def test_thirty_first_of_february_never_fires() -> None:
    assert parse("0 0 31 2 *").next_fire(at(2023, 1, 1)) is None
    assert parse("0 0 30 2 *").next_fire(at(2023, 1, 1)) is None


def test_the_twenty_ninth_of_february_waits_for_a_leap_year() -> None:
    fire = parse("0 0 29 2 *").next_fire(at(2023, 1, 1, 0, 0))
    assert fire == at(2024, 2, 29, 0, 0)


def test_the_next_fire_is_strictly_after_and_on_a_whole_minute() -> None:
    every = parse("* * * * *")
    assert every.next_fire(at(2024, 5, 1, 9, 0)) == at(2024, 5, 1, 9, 1)
    assert every.next_fire(at(2024, 5, 1, 9, 0) + 30.5) == at(2024, 5, 1, 9, 1)
    assert parse("0 9 * * *").next_fire(at(2024, 5, 1, 9, 0)) == at(2024, 5, 2, 9, 0)


def test_both_day_fields_restricted_match_either_as_vixie_cron_does() -> None:
    expr = parse("0 0 1 * 1")  # the 1st of each month, or any Monday
    start = at(2023, 1, 1, 12, 0)  # a Sunday
    fires, when = [], start
    for _ in range(6):
        found = expr.next_fire(when)
        assert found is not None
        fires.append(local(found))
        when = found
    assert [(f.month, f.day) for f in fires] == [(1, 2), (1, 9), (1, 16), (1, 23), (1, 30), (2, 1)]
    assert fires[-1].weekday() == 2  # the 1st of February 2023 is a Wednesday: by its day


def test_a_day_field_counts_as_free_only_when_it_is_a_plain_star() -> None:
    # */1 and 1-31 restrict the day of the month (to every day): OR with Monday is every day.
    for day in ("*/1", "1-31"):
        expr = parse(f"0 0 {day} * 1")
        first = expr.next_fire(at(2023, 1, 3, 12, 0))  # a Tuesday
        assert first == at(2023, 1, 4, 0, 0)
    # With a plain star the day of the week alone decides.
    assert parse("0 0 * * 1").next_fire(at(2023, 1, 3, 12, 0)) == at(2023, 1, 9, 0, 0)
    assert parse("0 0 13 * *").next_fire(at(2023, 1, 3, 12, 0)) == at(2023, 1, 13, 0, 0)


def test_seven_is_sunday_in_the_next_fire() -> None:
    fire = parse("0 0 * * 7").next_fire(at(2023, 1, 3))
    assert fire is not None and local(fire).weekday() == 6


def test_fires_are_in_local_time_across_a_dst_change() -> None:
    daily = parse("0 9 * * *")
    before = daily.next_fire(at(2024, 3, 30, 8, 0))  # summer time starts on the 31st
    after = daily.next_fire(before or 0)
    assert before is not None and after is not None
    assert (local(before).hour, local(after).hour) == (9, 9)
    assert after - before == 23 * 3600  # the day of the change has 23 hours
    # 02:30 does not exist on that day: the fire comes after the gap, and time moves on.
    gap = parse("30 2 * * *").next_fire(at(2024, 3, 31, 0, 0))
    assert gap is not None and at(2024, 3, 31, 1, 59) < gap <= at(2024, 3, 31, 4, 0)
