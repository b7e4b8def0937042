"""Fixtures for the file tools: a started runtime that approves "ask" outcomes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from deftly import Runtime


@pytest.fixture
async def rt(make_runtime: Callable[..., Any]) -> Runtime:
    runtime: Runtime = await make_runtime(approve_asks=True)
    return runtime
