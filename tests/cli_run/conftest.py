"""Fixtures of the `deftly run` tests."""

from __future__ import annotations

from collections.abc import Iterator

import pexpect
import pytest


@pytest.fixture
def sessions() -> Iterator[list[pexpect.spawn]]:
    """Children still running at the end are killed (a failed test leaves nothing)."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        if child.isalive():
            child.terminate(force=True)
