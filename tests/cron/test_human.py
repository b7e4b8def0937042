"""The humanSchedule text (reference cases 58)."""

from __future__ import annotations

import pytest

from deftly.features.cron.human import cron_to_human


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("* * * * *", "every minute"),
        ("*/5 * * * *", "every 5 minutes"),
        ("*/15 * * * *", "every 15 minutes"),
        ("7 * * * *", "at minute 7 of every hour"),
        ("0 9 * * *", "at 09:00 every day"),
        ("30 14 * * *", "at 14:30 every day"),
        ("0 */6 * * *", "every 6 hours at minute 00"),
        ("5 */2 * * *", "every 2 hours at minute 05"),
        ("0 9 * * 1-5", "at 09:00 on weekdays"),
        ("0 10 * * 0,6", "at 10:00 on weekends"),
        ("0 10 * * 6,7", "at 10:00 on weekends"),
        ("15 8 * * 1,3", "at 08:15 on Monday, Wednesday"),
        ("0 12 1 1 *", "at 12:00 on day 1 of January"),
        ("30 14 28 2 *", "at 14:30 on day 28 of February"),
    ],
)
def test_common_schedules_in_words(text: str, words: str) -> None:
    assert cron_to_human(text) == words


@pytest.mark.parametrize(
    "text", ["1,7,23 5,17 * * *", "*/7 * * * *", "0 0 1 * 1", "0 9 1-7 * *", "0 0 * 1-6 *"]
)
def test_other_schedules_are_shown_as_written(text: str) -> None:
    assert cron_to_human(text) == text


def test_an_expression_that_does_not_parse_is_shown_as_it_is() -> None:
    assert cron_to_human("garbage") == "garbage"
