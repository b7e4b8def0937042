"""A trivial stateful feature, as a third party would write one: a Counter tool whose
count is kept in the session store (so it survives a resume) and whose step comes from
its own config table, `[counter] step`."""

from tests.runtime.counter_feature.feature import FEATURE as COUNTER

__all__ = ["COUNTER"]
