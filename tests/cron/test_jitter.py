"""Jitter (reference cases 59): a fixed share per id, later for recurring jobs, earlier for
one-shots on :00 and :30, never before creation, off by config."""

from __future__ import annotations

from deftly.features.cron.expression import parse
from deftly.features.cron.jitter import fraction, jittered
from tests.cron.helpers import at


def test_the_share_of_an_eight_hex_id_is_its_value_over_two_to_the_32() -> None:
    assert fraction("80000000") == 0.5
    assert fraction("00000000") == 0.0
    assert fraction("ffffffff") == (2**32 - 1) / 2**32


def test_other_ids_hash_with_djb2_over_utf16_units() -> None:
    def djb2(text: str) -> int:
        h = 5381
        for ch in text:
            h = (h * 33 + ord(ch)) & 0xFFFFFFFF
        return h

    assert fraction("01HF7YAT00SWHETN5NBXVFZDBX") == djb2("01HF7YAT00SWHETN5NBXVFZDBX") / 2**32
    assert fraction("01HF7YAT00SWHETN5NBXVFZDBX") == fraction("01HF7YAT00SWHETN5NBXVFZDBX")
    assert fraction("a") != fraction("b")
    # An astral character is two UTF-16 units, as the reference hashes it.
    h = 5381
    for unit in (0xD83D, 0xDE00):
        h = (h * 33 + unit) & 0xFFFFFFFF
    assert fraction("😀") == h / 2**32


def test_recurring_jobs_fire_later_by_a_tenth_of_the_period_capped_at_15_minutes() -> None:
    five = parse("*/5 * * * *")
    ideal = at(2024, 5, 1, 9, 5)
    assert jittered(five, ideal, job_id="80000000", recurring=True, created_at=0) == ideal + 15
    daily = parse("0 9 * * *")
    ideal = at(2024, 5, 1, 9, 0)
    assert jittered(daily, ideal, job_id="80000000", recurring=True, created_at=0) == ideal + 450
    assert jittered(daily, ideal, job_id="00000000", recurring=True, created_at=0) == ideal


def test_one_shots_on_the_hour_or_half_hour_fire_up_to_90_seconds_early() -> None:
    expr = parse("0,7,30 9 * * *")
    nine = at(2024, 5, 1, 9, 0)
    created = at(2024, 5, 1, 8, 0)
    assert jittered(expr, nine, job_id="80000000", recurring=False, created_at=created) == (
        nine - 45
    )
    seven = at(2024, 5, 1, 9, 7)
    assert jittered(expr, seven, job_id="80000000", recurring=False, created_at=created) == seven
    half = at(2024, 5, 1, 9, 30)
    just_before = half - 10  # created at 09:29:50: 09:29:15 would come before that
    assert jittered(expr, half, job_id="80000000", recurring=False, created_at=just_before) == half


def test_no_jitter_fires_at_the_ideal_time() -> None:
    expr = parse("0 9 * * *")
    ideal = at(2024, 5, 1, 9, 0)
    for recurring in (True, False):
        assert (
            jittered(
                expr, ideal, job_id="80000000", recurring=recurring, created_at=0, enabled=False
            )
            == ideal
        )
