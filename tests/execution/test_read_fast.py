"""A small Read works on the bytes it already read (the first 512), and stats its path
once: the window, the totals and the stale-read guard must be what the long way gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly import Runtime


def _numbered(text: str) -> list[str]:
    """The file's lines as Read shows them (before the status note)."""
    return [line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line]


@pytest.mark.parametrize("size", [1, 511, 512, 513, 2000])
async def test_windows_at_the_in_memory_edge_are_the_files_lines(tmp_path: Path, size: int) -> None:
    lines = [f"l{i:04}" for i in range(size // 6 + 1)]
    data = ("\n".join(lines) + "\n").encode()[:size]
    (tmp_path / "f.txt").write_bytes(data)
    expected = data.decode().splitlines()
    async with Runtime(tmp_path, config={}, plugins=False, approve_asks=True) as rt:
        whole = await rt.call("Read", {"path": "f.txt"})
        middle = await rt.call("Read", {"path": "f.txt", "line_offset": 3, "n_lines": 4})
        tail = await rt.call("Read", {"path": "f.txt", "line_offset": -2})
    assert _numbered(whole.text) == expected
    assert _numbered(middle.text) == expected[2:6]
    assert _numbered(tail.text) == expected[-2:]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet="ab\n", min_size=1, max_size=600))
async def test_a_small_file_read_then_edited_passes_the_stale_read_guard(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "g.txt"
    path.write_text(text + "END")
    async with Runtime(tmp_path, config={}, plugins=False, approve_asks=True) as rt:
        read = await rt.call("Read", {"path": "g.txt"})
        edit = await rt.call("Edit", {"path": "g.txt", "old_string": "END", "new_string": "FIN"})
    assert not read.is_error, read.text
    assert not edit.is_error, edit.text
    assert path.read_text().endswith("FIN")


async def test_a_small_utf16_file_keeps_its_own_digest(tmp_path: Path) -> None:
    path = tmp_path / "u.txt"
    path.write_bytes("\ufeffhello\nworld\n".encode("utf-16-le"))
    async with Runtime(tmp_path, config={}, plugins=False, approve_asks=True) as rt:
        read = await rt.call("Read", {"path": "u.txt"})
        edit = await rt.call("Edit", {"path": "u.txt", "old_string": "world", "new_string": "all"})
    assert _numbered(read.text) == ["hello", "world"]
    assert not edit.is_error, edit.text
    assert path.read_bytes().decode("utf-16-le").lstrip("\ufeff") == "hello\nall\n"
