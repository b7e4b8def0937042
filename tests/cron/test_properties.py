"""Property tests: every expression the grammar allows parses to the values it names and
fires on a minute that matches it (and on no earlier one); every term outside the grammar
is refused naming its field; jitter stays in its bounds and is fixed per job id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.features.cron.expression import FIELDS, CronField, CronSyntaxError, parse
from deftly.features.cron.jitter import ONE_SHOT_LEAD, RECURRING_CAP, fraction, jittered

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DST here (a skipped hour has no minute to match); DST has its own test."""
    monkeypatch.setenv("TZ", "UTC")


@st.composite
def term(draw: st.DrawFn, field: CronField) -> tuple[str, set[int]]:
    """A valid term of `field` and the values it stands for (an oracle of our own)."""
    lo, hi = field.low, field.high
    kind = draw(
        st.sampled_from(["star", "value", "range", "star_step", "value_step", "range_step"])
    )
    step = draw(st.integers(1, hi - lo + 2))
    a = draw(st.integers(lo, hi))
    b = draw(st.integers(a, hi))
    if kind == "star":
        return "*", set(range(lo, hi + 1))
    if kind == "value":
        return str(a), {a}
    if kind == "range":
        return f"{a}-{b}", set(range(a, b + 1))
    if kind == "star_step":
        return f"*/{step}", set(range(lo, hi + 1, step))
    if kind == "value_step":
        return f"{a}/{step}", set(range(a, hi + 1, step))
    return f"{a}-{b}/{step}", set(range(a, b + 1, step))


@st.composite
def field_text(draw: st.DrawFn, field: CronField) -> tuple[str, set[int]]:
    terms = draw(st.lists(term(field), min_size=1, max_size=3))
    values: set[int] = set()
    for _, v in terms:
        values |= v
    return ",".join(t for t, _ in terms), values


@st.composite
def expression(draw: st.DrawFn) -> tuple[str, list[set[int]]]:
    fields = [draw(field_text(f)) for f in FIELDS]
    return " ".join(t for t, _ in fields), [v for _, v in fields]


STARTS = st.integers(
    int(datetime(2020, 1, 1, tzinfo=UTC).timestamp()),
    int(datetime(2030, 1, 1, tzinfo=UTC).timestamp()),
)


@PROPERTY
@given(expression(), STARTS)
def test_any_valid_expression_parses_and_its_next_fire_matches(
    case: tuple[str, list[set[int]]], start: int
) -> None:
    text, values = case
    expr = parse(text)
    weekdays = {0 if v == 7 else v for v in values[4]}
    assert [expr.minutes, expr.hours, expr.days, expr.months, expr.weekdays] == [
        *values[:4],
        weekdays,
    ]
    fire = expr.next_fire(start)
    if fire is None:
        return
    assert start < fire <= start + 5 * 366 * 86_400
    when = datetime.fromtimestamp(fire, UTC)
    assert when.second == 0 and when.microsecond == 0
    assert expr.matches(when)
    # No earlier minute matches (checked when the fire is near enough to walk to).
    minute = datetime.fromtimestamp(start, UTC).replace(second=0, microsecond=0)
    if fire - start <= 2 * 86_400:
        minute += timedelta(minutes=1)
        while minute < when:
            assert not expr.matches(minute), f"{text} matches {minute} before {when}"
            minute += timedelta(minutes=1)


def _bad_terms(field: CronField) -> st.SearchStrategy[str]:
    lo, hi = field.low, field.high
    return st.one_of(
        st.integers(hi + 1, hi + 500).map(str),
        st.integers(0, 99).map(lambda n: f"-{n}"),
        st.integers(0, 99).map(lambda n: f"+{n}"),
        st.sampled_from(["MON", "JAN", "L", "W", "?", "#", "1#2", "15W", "5L", "x", "1e1"]),
        st.sampled_from(["0x1", "*/0", "*/", "/5", "*/-1", "1-", "-", "*/1.5", "1..3"]),
        st.tuples(st.integers(lo, hi), st.integers(lo, hi))
        .filter(lambda p: p[0] > p[1])
        .map(lambda p: f"{p[0]}-{p[1]}"),
        st.just(""),  # an empty term: "1,,2"
    )


@st.composite
def broken(draw: st.DrawFn) -> tuple[str, str]:
    fields = [draw(field_text(f))[0] for f in FIELDS]
    index = draw(st.integers(0, 4))
    field = FIELDS[index]
    bad = draw(_bad_terms(field))
    terms = fields[index].split(",")
    terms.insert(draw(st.integers(0, len(terms))), bad)
    fields[index] = ",".join(terms)
    return " ".join(fields), field.name


@PROPERTY
@given(broken())
def test_any_invalid_term_is_refused_naming_its_field(case: tuple[str, str]) -> None:
    text, name = case
    with pytest.raises(CronSyntaxError) as caught:
        parse(text)
    assert caught.value.field == name, text
    assert f"the {name} field" in str(caught.value)


IDS = st.one_of(
    st.text(min_size=1, max_size=30),
    st.text("0123456789abcdef", min_size=8, max_size=8),
    st.text("0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26),
)


@PROPERTY
@given(IDS, STARTS, st.sampled_from(["*/5 * * * *", "0 9 * * *", "17 */3 * * 1-5", "0 0 1 * *"]))
def test_recurring_jitter_is_later_within_its_cap_and_fixed_per_id(
    job_id: str, start: int, text: str
) -> None:
    expr = parse(text)
    ideal = expr.next_fire(start)
    assert ideal is not None
    following = expr.next_fire(ideal)
    assert following is not None
    cap = min(0.1 * (following - ideal), RECURRING_CAP)
    fires = [
        jittered(expr, ideal, job_id=job_id, recurring=True, created_at=start) for _ in range(2)
    ]
    assert fires[0] == fires[1]
    assert 0 <= fraction(job_id) < 1
    assert ideal <= fires[0] <= ideal + cap
    off = jittered(expr, ideal, job_id=job_id, recurring=True, created_at=start, enabled=False)
    assert off == ideal


@PROPERTY
@given(IDS, STARTS, st.integers(0, 3600))
def test_one_shot_jitter_is_earlier_by_at_most_90_seconds_and_never_before_creation(
    job_id: str, start: int, lead: int
) -> None:
    expr = parse("0,30 * * * *")
    ideal = expr.next_fire(start)
    assert ideal is not None
    created = ideal - lead
    fire = jittered(expr, ideal, job_id=job_id, recurring=False, created_at=created)
    assert ideal - ONE_SHOT_LEAD <= fire <= ideal
    assert fire >= created
    other = parse("7 * * * *")
    ideal7 = other.next_fire(start)
    assert ideal7 is not None
    assert jittered(other, ideal7, job_id=job_id, recurring=False, created_at=0) == ideal7


@settings(max_examples=60, deadline=None)
@given(expression(), STARTS)
def test_walking_the_fires_gives_each_next_fire_in_turn(
    case: tuple[str, list[set[int]]], start: int
) -> None:
    expr = parse(case[0])
    walked = expr.fires(start)
    when: float = start
    for _ in range(5):
        expected = expr.next_fire(when)
        if expected is None:
            return
        assert next(walked) == expected
        when = expected
