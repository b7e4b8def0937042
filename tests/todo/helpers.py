"""Runtimes with the todo feature (a built-in one)."""

from __future__ import annotations

from typing import Any

from deftly import Runtime
from deftly.features import BUILTIN_FEATURES
from deftly.features.todo.feature import FEATURE as TODO

FEATURES = list(BUILTIN_FEATURES)
assert TODO in FEATURES  # a built-in feature

FIRST_TWO = [
    {"title": "first", "status": "pending"},
    {"title": "second", "status": "in_progress"},
]


async def todo_runtime(make_runtime: Any, **kwargs: Any) -> Runtime:
    """A started runtime with the todo feature."""
    runtime: Runtime = await make_runtime(features=FEATURES, **kwargs)
    return runtime
