"""Cron tests read times in a fixed zone with DST (Berlin), whatever the machine's zone."""

from __future__ import annotations

import pytest

ZONE = "Europe/Berlin"


@pytest.fixture(autouse=True)
def berlin_time(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TZ", ZONE)
    return ZONE
