"""Property tests: Read's windows tile a file exactly, forward and from the end."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.config.files import FilesConfig
from deftly.env import LocalEnv
from deftly.features.files.read import ReadParams, ReadTool
from deftly.features.files.tracker import FileTracker
from deftly.policy import Workspace

# Text a person would call text: no control characters (a file full of them is binary)
# except tabs, and no line breaks (the strategy adds those).
line_text = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"),
        st.sampled_from("\t "),
    ),
    max_size=60,
)
files = st.tuples(
    st.lists(line_text, min_size=1, max_size=40),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),  # a final line break
    st.booleans(),  # a UTF-8 BOM
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NEXT = re.compile(r"line_offset=(-?\d+)")


def write(directory: Path, lines: list[str], ending: str, final: bool, bom: bool) -> Path:
    body = ending.join(lines) + (ending if final else "")
    path = directory / "f.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8"))
    return path


def expected_lines(lines: list[str], final: bool, bom: bool = False) -> list[str]:
    # A file ending without a line break whose last line is empty has one line fewer,
    # except that a file holding only a byte-order mark is one empty line (its bytes).
    if not final and lines and lines[-1] == "":
        return [""] if bom and len(lines) == 1 else lines[:-1]
    return lines


def parse(output: str) -> list[tuple[int, str]]:
    if not output:
        return []
    pairs = []
    for row in output.split("\n"):
        number, _, text = row.partition("\t")
        pairs.append((int(number), text))
    return pairs


def tool_for(directory: Path, count_all: bool) -> ReadTool:
    config = FilesConfig(
        read_max_lines=7,
        read_max_bytes=1024,
        read_count_max_bytes=10**9 if count_all else 0,
    )
    return ReadTool(LocalEnv(), Workspace(directory), config, FileTracker())


@SETTINGS
@given(files, st.integers(min_value=1, max_value=9), st.booleans())
def test_forward_windows_tile_the_file(
    spec: tuple[list[str], str, bool, bool], step: int, count_all: bool
) -> None:
    lines, ending, final, bom = spec
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path = write(directory, lines, ending, final, bom)
        tool = tool_for(directory, count_all)
        expected = expected_lines(lines, final, bom)
        seen: list[tuple[int, str]] = []
        offset = 1
        for _ in range(len(expected) + 2):
            result = tool.read(ReadParams(path=str(path), line_offset=offset, n_lines=step), path)
            assert not result.is_error, result.output
            page = parse(result.text)
            seen.extend(page)
            found = NEXT.search(result.note or "")
            if not page or found is None:
                assert "End of file" in (result.note or "") or not page
                break
            assert int(found.group(1)) == page[-1][0] + 1
            offset = int(found.group(1))
        assert [n for n, _ in seen] == list(range(1, len(seen) + 1))
        assert [t for _, t in seen] == expected


@SETTINGS
@given(files, st.integers(min_value=1, max_value=60))
def test_a_tail_is_the_last_lines_with_their_numbers(
    spec: tuple[list[str], str, bool, bool], back: int
) -> None:
    lines, ending, final, bom = spec
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path = write(directory, lines, ending, final, bom)
        expected = expected_lines(lines, final, bom)
        counted = tool_for(directory, count_all=True)
        result = counted.read(ReadParams(path=str(path), line_offset=-back, n_lines=1000), path)
        page = parse(result.text)
        total = len(expected)
        first = max(1, total - back + 1)
        # The window starts `back` lines before the end and holds at most 7 lines; when
        # they pass the 1 KiB budget, lines are dropped from its front.
        want = list(enumerate(expected, 1))[first - 1 :][:7]
        assert page == want[len(want) - len(page) :]
        assert (page[-1][0] if page else 0) == (want[-1][0] if want else 0)

        uncounted = tool_for(directory, count_all=False)
        relative = uncounted.read(ReadParams(path=str(path), line_offset=-back, n_lines=1000), path)
        rel_page = parse(relative.text)
        assert [t for _, t in rel_page] == [t for _, t in page]
        if back < total:  # numbered from the end: -back, -back + 1, ... (7 at most)
            numbers = [n for n, _ in rel_page]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
            assert numbers[-1] == -back + min(back, 7) - 1
