"""Read against real files: windows, tails, encodings, line endings, refusals."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.config.files import FilesConfig
from deftly.env import LocalEnv
from deftly.features.files.read import ReadParams, ReadTool
from deftly.features.files.tracker import FileTracker
from deftly.policy import Workspace
from tests.files.helpers import body_lines, call, tool_path


def reader(root: Path, **config: Any) -> ReadTool:
    return ReadTool(LocalEnv(), Workspace(root), FilesConfig(**config), FileTracker())


def read_direct(tool: ReadTool, path: Path, **args: Any) -> Any:
    return tool.read(ReadParams(path=str(path), **args), path)


# -- the reference's cases (builtin-tools.md §24, Read) ----------------------------------


async def test_reads_numbered_lines_with_a_status_note(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    result = await call(rt, "Read", {"path": "a.txt"})
    assert not result.is_error
    assert result.text == "1\talpha\n2\tbeta"
    assert result.note is not None and result.note.startswith("<system>")
    assert "lines 1-2 of 2" in result.note and "End of file" in result.note
    assert result.result.spill_exempt


async def test_pure_crlf_is_shown_with_lf(rt: Runtime, workspace: Path) -> None:
    (workspace / "crlf.txt").write_bytes(b"alpha\r\nbeta\r\n")
    result = await call(rt, "Read", {"path": "crlf.txt"})
    assert result.text == "1\talpha\n2\tbeta"
    assert "CRLF" in (result.note or "") and "\\r" not in result.text


async def test_mixed_and_lone_carriage_returns_are_made_visible(
    rt: Runtime, workspace: Path
) -> None:
    (workspace / "mixed.txt").write_bytes(b"alpha\r\nbeta\ngamma\rdone")
    result = await call(rt, "Read", {"path": "mixed.txt"})
    assert result.text == "1\talpha\\r\n2\tbeta\n3\tgamma\\rdone"
    assert "\r" not in result.text
    assert "carriage return" in (result.note or "") and "lines 1-3 of 3" in (result.note or "")


async def test_paging_forward_past_the_end_and_empty_files(rt: Runtime, workspace: Path) -> None:
    (workspace / "five.txt").write_text("a\nb\nc\nd\ne")
    (workspace / "two.txt").write_text("a\nb")
    (workspace / "empty.txt").write_text("")
    page = await call(rt, "Read", {"path": "five.txt", "line_offset": 2, "n_lines": 2})
    assert page.text == "2\tb\n3\tc"
    assert "lines 2-3 of 5" in (page.note or "") and "line_offset=4" in (page.note or "")
    past = await call(rt, "Read", {"path": "two.txt", "line_offset": 20})
    assert not past.is_error and body_lines(past) == []
    assert "has 2 lines" in (past.note or "")
    empty = await call(rt, "Read", {"path": "empty.txt"})
    assert not empty.is_error and "empty" in (empty.note or "")


async def test_negative_offsets_read_the_tail(rt: Runtime, workspace: Path) -> None:
    (workspace / "five.txt").write_text("a\nb\nc\nd\ne")
    tail = await call(rt, "Read", {"path": "five.txt", "line_offset": -3})
    assert tail.text == "3\tc\n4\td\n5\te" and "End of file" in (tail.note or "")
    head_of_tail = await call(rt, "Read", {"path": "five.txt", "line_offset": -5, "n_lines": 2})
    assert head_of_tail.text == "1\ta\n2\tb" and "line_offset=3" in (head_of_tail.note or "")
    last = await call(rt, "Read", {"path": "five.txt", "line_offset": -1})
    assert last.text == "5\te" and "line 5 of 5" in (last.note or "")
    everything = await call(rt, "Read", {"path": "five.txt", "line_offset": -100})
    assert everything.text.splitlines()[0] == "1\ta" and len(everything.text.splitlines()) == 5


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        ({"line_offset": 0}, False),
        ({"line_offset": -1000}, True),
        ({"line_offset": -1001}, False),
        ({"n_lines": 0}, False),
        ({"n_lines": -1}, False),
        ({"bogus": 1}, False),
        ({"line_offset": 3, "n_lines": 5}, True),
    ],
)
async def test_schema_bounds(
    rt: Runtime, workspace: Path, args: dict[str, Any], valid: bool
) -> None:
    (workspace / "f.txt").write_text("x\n")
    result = await call(rt, "Read", {"path": "f.txt", **args})
    assert result.is_error is not valid
    if not valid:
        assert 'Invalid arguments for tool "Read"' in result.text


async def test_path_and_stat_errors(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "readme.md").write_text("x")
    (workspace / ".env").write_text("SECRET=1")
    outside = tmp_path / "external.txt"
    outside.write_text("outside\n")

    escaped = await call(rt, "Read", {"path": "../../outside.txt"})
    assert escaped.is_error and "outside the workspace" in escaped.text
    assert "absolute path" in escaped.text
    missing = await call(rt, "Read", {"path": "readme.txt"})
    assert missing.is_error and '"readme.txt" does not exist' in missing.text
    assert "readme.md" in missing.text  # a close name is suggested
    directory = await call(rt, "Read", {"path": "src"})
    assert directory.is_error and "is a directory" in directory.text and "Glob" in directory.text
    secret = await call(rt, "Read", {"path": ".env"})
    assert secret.is_error and "secret" in secret.text and "SECRET=1" not in secret.text
    absolute = await call(rt, "Read", {"path": str(outside)})
    assert not absolute.is_error and absolute.text == "1\toutside"


async def test_home_relative_paths(
    make_runtime: Any, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "today.txt").write_text("remember\n")
    monkeypatch.setenv("HOME", str(home))
    rt = await make_runtime(approve_asks=True)
    result = await call(rt, "Read", {"path": "~/notes/today.txt"})
    assert not result.is_error and result.text == "1\tremember"


async def test_images_videos_binary_and_legacy_encodings_are_refused(
    rt: Runtime, workspace: Path
) -> None:
    (workspace / "sample.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    (workspace / "sample").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    (workspace / "clip.mp4").write_bytes(b"\0\0\0\x18ftypmp42" + b"\0" * 32)
    (workspace / "blob.bin").write_bytes(b"plain prefix\x00\x01")
    (workspace / "late-nul.txt").write_bytes(b"x" * 600 + b"\nline two \x00 here\n")
    (workspace / "latin1.txt").write_bytes(b"caf\xe9 au lait\n")
    (workspace / "bad-later.txt").write_bytes(b"hi\n" + b"ok\n" * 300 + b"bad \xff byte\n")

    png = await call(rt, "Read", {"path": "sample.png"})
    assert png.is_error and "image" in png.text and "ReadMediaFile" in png.text
    bare = await call(rt, "Read", {"path": "sample"})
    assert bare.is_error and "image" in bare.text
    video = await call(rt, "Read", {"path": "clip.mp4"})
    assert video.is_error and "video" in video.text and "ffmpeg" in video.text
    blob = await call(rt, "Read", {"path": "blob.bin"})
    assert blob.is_error and "binary" in blob.text
    late = await call(rt, "Read", {"path": "late-nul.txt"})
    assert late.is_error and "binary" in late.text and "line 2" in late.text
    latin = await call(rt, "Read", {"path": "latin1.txt"})
    assert latin.is_error and "UTF-8" in latin.text and "iconv" in latin.text
    later = await call(rt, "Read", {"path": "bad-later.txt"})
    assert later.is_error and "line 302" in later.text and "iconv" in later.text
    first_lines = await call(rt, "Read", {"path": "bad-later.txt", "n_lines": 10})
    assert not first_lines.is_error  # the window never decodes what it does not show


async def test_a_text_file_named_like_an_image_is_read_as_text(
    rt: Runtime, workspace: Path
) -> None:
    (workspace / "fake.png").write_text("not really a picture\n")
    result = await call(rt, "Read", {"path": "fake.png"})
    assert not result.is_error and result.text == "1\tnot really a picture"


async def test_line_and_byte_limits(rt: Runtime, workspace: Path) -> None:
    (workspace / "many.txt").write_text("".join(f"line {i}\n" for i in range(1, 1002)))
    many = await call(rt, "Read", {"path": "many.txt"})
    assert many.text.splitlines()[-1] == "1000\tline 1000"
    assert "1,000-line limit" in (many.note or "") and "line_offset=1001" in (many.note or "")
    (workspace / "wide.txt").write_text(("x" * 1900 + "\n") * 80)
    wide = await call(rt, "Read", {"path": "wide.txt"})
    shown = wide.text.splitlines()
    assert len(wide.text.encode()) <= 100 * 1024 < len(wide.text.encode()) + 1910
    assert "100.0 KiB limit" in (wide.note or "")
    assert f"line_offset={len(shown) + 1}" in (wide.note or "")


async def test_long_lines_are_cut_with_a_marker(rt: Runtime, workspace: Path) -> None:
    (workspace / "long.txt").write_text("x" * 2010 + "\nshort\n" + "é" * 5000 + "\n")
    result = await call(rt, "Read", {"path": "long.txt"})
    first, second, third = result.text.split("\n")
    assert first == "1\t" + "x" * 2000 + "[...truncated]"
    assert second == "2\tshort"
    assert third == "3\t" + "é" * 2000 + "[...truncated]"
    assert "Lines 1, 3 are longer than 2,000 characters" in (result.note or "")


async def test_utf8_bom_is_stripped_and_utf16_is_transcoded(rt: Runtime, workspace: Path) -> None:
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\nworld\n")
    (workspace / "le.txt").write_bytes(b"\xff\xfe" + "hello\nworld\n".encode("utf-16-le"))
    (workspace / "be.txt").write_bytes(b"\xfe\xff" + "héllo\r\nwörld\r\n".encode("utf-16-be"))
    (workspace / "plain-le.txt").write_bytes("hello\nworld\n".encode("utf-16-le"))
    bom = await call(rt, "Read", {"path": "bom.txt"})
    assert bom.text == "1\thello\n2\tworld"
    le = await call(rt, "Read", {"path": "le.txt"})
    assert le.text == "1\thello\n2\tworld" and "UTF-16 LE" in (le.note or "")
    be = await call(rt, "Read", {"path": "be.txt"})
    assert be.text == "1\théllo\n2\twörld" and "UTF-16 BE" in (be.note or "")
    plain = await call(rt, "Read", {"path": "plain-le.txt"})
    assert plain.text == "1\thello\n2\tworld"


async def test_utf16_over_the_transcode_limit_is_refused(
    make_runtime: Any, workspace: Path
) -> None:
    rt = await make_runtime(approve_asks=True, config={"files": {"read_utf16_max_bytes": 100}})
    (workspace / "big16.txt").write_bytes(b"\xff\xfe" + ("line\n" * 50).encode("utf-16-le"))
    result = await call(rt, "Read", {"path": "big16.txt"})
    assert (
        result.is_error and "UTF-16 LE" in result.text and "too large to transcode" in result.text
    )


async def test_fifos_are_refused_without_blocking(rt: Runtime, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await call(rt, "Read", {"path": "pipe"})
    assert result.is_error and "not a regular file" in result.text


def test_unreadable_file() -> None:
    """Run as an unprivileged user: root reads any file regardless of permissions."""
    from tests.files.unprivileged import call_unprivileged, open_workspace

    workspace = open_workspace()
    (workspace / "open.txt").write_text("fine\n")
    locked = workspace / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)
    result = call_unprivileged(
        workspace, "Read", {"path": "locked.txt"}, warmup=[("Read", {"path": "open.txt"})]
    )
    assert result["is_error"] and "Permission denied" in result["text"]


async def test_description_states_the_configured_limits(make_runtime: Any) -> None:
    rt = await make_runtime(config={"files": {"read_max_lines": 321, "read_max_line_chars": 777}})
    description = next(t.description for t in rt.tools() if t.name == "Read")
    assert "321 lines" in description and "777 characters" in description
    assert "${" not in description


# -- big files: windows, tails, memory-free paths -------------------------------------------


def test_window_deep_in_a_file_and_the_cached_index(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(f"row {i}\n".encode() for i in range(1, 200_001)))
    tool = reader(tmp_path)
    first = read_direct(tool, path, line_offset=150_000, n_lines=3)
    assert first.text == "150000\trow 150000\n150001\trow 150001\n150002\trow 150002"
    assert "of 200,000" in first.note
    assert len(tool.indexes._items) == 1
    again = read_direct(tool, path, line_offset=199_999)
    assert again.text == "199999\trow 199999\n200000\trow 200000"
    assert "End of file" in again.note
    tail = read_direct(tool, path, line_offset=-2)
    assert tail.text == "199999\trow 199999\n200000\trow 200000"


def test_uncounted_huge_file_tail_is_numbered_from_the_end(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    path.write_bytes(b"".join(f"entry {i}\n".encode() for i in range(1, 50_001)))
    tool = reader(tmp_path, read_count_max_bytes=1024)
    tail = read_direct(tool, path, line_offset=-3)
    assert tail.text == "-3\tentry 49998\n-2\tentry 49999\n-1\tentry 50000"
    assert "too big to count" in tail.note and "from the end" in tail.note
    back = read_direct(tool, path, line_offset=-6, n_lines=3)
    assert back.text == "-6\tentry 49995\n-5\tentry 49996\n-4\tentry 49997"
    assert "line_offset=-3" in back.note
    forward = read_direct(tool, path, line_offset=10, n_lines=2)
    assert forward.text == "10\tentry 10\n11\tentry 11"
    assert "too big to count" in forward.note and "continues" in forward.note


def test_a_giant_single_line_is_cut_and_read_in_flat_memory(tmp_path: Path) -> None:
    path = tmp_path / "minified.js"
    with open(path, "wb") as out:
        for _ in range(24):
            out.write(b"a" * (1 << 20))
        out.write(b"\nend\n")
    tool = reader(tmp_path, read_count_max_bytes=0)
    tail = read_direct(tool, path, line_offset=-2)
    lines = tail.text.split("\n")
    assert lines[0] == "1\t" + "a" * 2000 + "[...truncated]" and lines[1] == "2\tend"
    head = read_direct(tool, path, n_lines=1)
    assert len(head.text) < 2100 and "longer than" in head.note


def test_file_changing_during_the_read_is_reported(tmp_path: Path) -> None:
    """A real concurrent writer: the env appends to the file between Read's open and its
    final check (an ExecEnv subclass hooks the moment; the write itself is real)."""
    path = tmp_path / "growing.log"
    path.write_text("one\ntwo\n")

    class WriterEnv(LocalEnv):
        calls = 0

        def stat_handle(self, handle: Any) -> os.stat_result:
            WriterEnv.calls += 1
            if WriterEnv.calls == 2:  # the check after the window was read
                with open(path, "a") as other:
                    other.write("three\n")
            return super().stat_handle(handle)

    tool = ReadTool(WriterEnv(), Workspace(tmp_path), FilesConfig(), FileTracker())
    result = read_direct(tool, path)
    assert result.is_error and "changed while it was being read" in result.text


async def test_reading_stamps_the_file_for_the_stale_guard(rt: Runtime, workspace: Path) -> None:
    (workspace / "f.txt").write_text("x\n")
    await call(rt, "Read", {"path": "f.txt"})
    tracker = rt.service(FileTracker)
    stamp = tracker.get(tool_path((workspace / "f.txt").resolve()))
    assert stamp is not None and stamp.digest is not None and stamp.size == 2


def test_note_reports_truncated_lines_only_in_the_window(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("short\n" + "y" * 3000 + "\nshort\n")
    tool = reader(tmp_path)
    result = read_direct(tool, path, line_offset=3)
    assert result.text == "3\tshort" and "longer than" not in result.note
    assert re.search(r"Showed line 3 of 3", result.note)
