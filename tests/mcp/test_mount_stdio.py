"""The stdio transport's line splitter: whatever the chunking, the same lines come out, and
a long line is joined once (linear), not re-split on every chunk."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from deftly.features.mcp.stdio import LineSplitter


@given(
    lines=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",))),
        max_size=8,
    ),
    cuts=st.lists(st.integers(0, 400), max_size=12),
)
def test_any_chunking_gives_back_the_lines(lines: list[str], cuts: list[int]) -> None:
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    splitter = LineSplitter()
    out: list[str] = []
    for start, end in pairwise(points):
        out.extend(splitter.feed(data[start:end]))  # may cut inside a UTF-8 sequence
    assert out == lines


def test_a_long_line_in_small_chunks_keeps_only_pieces_until_it_ends() -> None:
    splitter = LineSplitter()
    chunk = b"x" * 65_536
    for _ in range(200):  # 13 MB: quadratic re-splitting would take minutes here
        assert splitter.feed(chunk) == []
    (line,) = splitter.feed(b"y\n")
    assert len(line) == 200 * 65_536 + 1 and line.endswith("xy")
