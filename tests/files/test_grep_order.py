"""Newest first: picking a page's files equals sorting them all (ties in rg's order)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deftly.features.files.grep import newest_first

# Few distinct values, so ties are common: they must keep the order rg gave.
mtimes = st.lists(st.sampled_from([0.0, 1.5, 2.0, 1e9, 1e9 + 0.5]), max_size=300)


@given(mtimes, st.one_of(st.none(), st.integers(min_value=0, max_value=400)))
def test_the_page_equals_the_sorted_prefix(times: list[float], end: int | None) -> None:
    everything = sorted(range(len(times)), key=times.__getitem__, reverse=True)
    assert newest_first(times, end)[:end] == everything[:end]


def test_a_short_page_of_a_long_list_is_picked_in_order() -> None:
    times = [float(i % 7) for i in range(1_000)]
    picked = newest_first(times, 10)
    assert len(picked) == 10
    assert picked == [i for i in range(1_000) if i % 7 == 6][:10]
