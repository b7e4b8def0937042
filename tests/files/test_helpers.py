"""The shared pieces on their own: encodings, file types, line endings, line scanning,
near-miss hints, the stale-read tracker, and the environment's file primitives."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.env import LocalEnv
from deftly.features.files.encoding import NotText, decode_text, sniff_encoding
from deftly.features.files.filetype import detect_file_type
from deftly.features.files.line_endings import (
    EndingCounter,
    ending_stats,
    materialize,
    show_carriage_returns,
    to_model_view,
)
from deftly.features.files.lines import full_index, nth_newline, read_window, tail_start
from deftly.features.files.near_miss import find_near_misses
from deftly.features.files.tracker import FileTracker


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"hello\n", "utf-8"),
        (b"\xef\xbb\xbfhello", "utf-8"),
        (b"\xff\xfeh\x00i\x00", "utf-16-le"),
        (b"\xfe\xff\x00h\x00i", "utf-16-be"),
        ("plain text".encode("utf-16-le"), "utf-16-le"),
        ("plain text".encode("utf-16-be"), "utf-16-be"),
        (b"plain prefix\x00\x01", "binary"),
        (b"\x01\x02\x03\x04\x05\x06abc", "binary"),
        (b"caf\xe9 au lait", "undecodable"),
        ("é".encode()[:1], "utf-8"),  # a sequence cut at the sample's end
    ],
)
def test_sniffing(data: bytes, kind: str) -> None:
    assert sniff_encoding(data).kind == kind


def test_decode_keeps_what_encode_needs() -> None:
    decoded = decode_text(b"\xef\xbb\xbfa\r\nb")
    assert decoded.text == "a\r\nb" and decoded.encode("x") == b"\xef\xbb\xbfx"
    wide = decode_text(b"\xff\xfe" + "hi".encode("utf-16-le"))
    assert wide.encode("yo") == b"\xff\xfe" + "yo".encode("utf-16-le")
    with pytest.raises(NotText):
        decode_text(b"a\x00b\x00c\x00\xd8")


@pytest.mark.parametrize(
    ("name", "header", "kind", "mime"),
    [
        ("a.png", b"\x89PNG\r\n\x1a\n", "image", "image/png"),
        ("noext", b"\xff\xd8\xff\xe0", "image", "image/jpeg"),
        ("a.gif", b"GIF89a", "image", "image/gif"),
        ("a.webp", b"RIFF\0\0\0\0WEBPVP8 ", "image", "image/webp"),
        ("a.mp4", b"\0\0\0\x18ftypmp42", "video", "video/mp4"),
        ("a.heic", b"\0\0\0\x18ftypheic", "image", "image/heic"),
        ("a.svg", b"<svg/>", "text", "image/svg+xml"),
        ("a.ts", b"export const x = 1", "text", "text/plain"),
        ("a.png", b"just text", "unknown", "image/png"),
        ("a.pdf", b"", "unknown", "application/octet-stream"),
        (".env", b"A=1", "text", "text/plain"),
    ],
)
def test_file_types(name: str, header: bytes, kind: str, mime: str) -> None:
    found = detect_file_type(name, header, "text")
    assert (found.kind, found.mime) == (kind, mime)


def test_line_ending_styles_and_views() -> None:
    assert ending_stats("a\nb\n").style == "lf"
    assert ending_stats("a\r\nb\r\n").style == "crlf"
    assert ending_stats("a\r\nb\n").style == "mixed"
    assert ending_stats("a\rb").style == "mixed"
    assert ending_stats("abc").style == "none"
    assert to_model_view("a\r\nb\r\n", "crlf") == "a\nb\n"
    assert materialize("x\ny\r\nz", "crlf") == "x\r\ny\r\nz"
    assert materialize("x\ny", "mixed") == "x\ny"
    assert show_carriage_returns("a\r\n") == "a\\r\n"


@settings(deadline=None, max_examples=200)
@given(st.binary(max_size=300), st.integers(min_value=1, max_value=64))
def test_chunked_ending_counts_equal_whole_counts(data: bytes, chunk: int) -> None:
    counter = EndingCounter()
    for start in range(0, len(data), chunk):
        counter.feed(data[start : start + chunk])
    assert counter.stats == ending_stats(data)


@settings(deadline=None, max_examples=200)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=50))
def test_line_scanning_agrees_with_split(data: bytes, count: int) -> None:
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    if not data:
        lines = []
    index = full_index(io.BytesIO(data))
    assert index.total_lines == len(lines)
    start = tail_start(io.BytesIO(data), len(data), max(count, 1))
    expected_first = max(0, len(lines) - max(count, 1))
    assert data[start:].split(b"\n")[: len(lines) - expected_first] == lines[expected_first:]
    window = read_window(io.BytesIO(data), 0, 1, max(count, 1), 10_000)
    assert window.data == lines[: max(count, 1)]
    assert window.more == (len(lines) > max(count, 1))


def test_nth_newline() -> None:
    buf = b"a\nbb\nccc\n"
    assert [nth_newline(buf, 0, n) for n in (1, 2, 3, 4)] == [1, 4, 8, -1]
    big = b"x\n" * 100_000
    assert nth_newline(big, 0, 70_000) == 139_999


def test_near_misses_explain_whitespace() -> None:
    view = "def f():\n\tif x:  \n\t\treturn 1\n"
    [miss] = find_near_misses(view, "    if x:\n        return 1\n")
    assert (miss.first_line, miss.last_line) == (2, 3)
    assert miss.text == "\tif x:  \n\t\treturn 1\n"
    assert any("1 tab in the file, 4 spaces" in d for d in miss.differences)
    assert any("ends with 2 spaces in the file" in d for d in miss.differences)
    assert find_near_misses(view, "while True:") == []
    assert find_near_misses(view, "   \n  ") == []


def test_tracker_stamps_and_staleness(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one")
    tracker = FileTracker(hash_max_bytes=1024, capacity=2)
    assert not tracker.is_stale(path, path.stat())  # never seen
    tracker.stamp(path, path.stat(), b"one")
    assert not tracker.is_stale(path, path.stat())
    os.utime(path, (1, 1))
    assert not tracker.is_stale(path, path.stat(), b"one")  # touched, same content
    assert tracker.is_stale(path, path.stat())  # changed stamp and no content to compare
    path.write_text("two")
    assert tracker.is_stale(path, path.stat(), b"two")
    for i in range(3):
        tracker.stamp(tmp_path / f"x{i}", path.stat())
    assert tracker.get(path) is None  # the oldest entry was forgotten


def test_env_write_atomic_keeps_mode_and_uses_umask_for_new_files(tmp_path: Path) -> None:
    env = LocalEnv()
    target = tmp_path / "tool.sh"
    target.write_text("old")
    target.chmod(0o741)
    env.write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o741
    previous = os.umask(0o077)
    try:
        env.write_atomic(tmp_path / "fresh", b"x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["fresh", "tool.sh"]


def test_env_append_write_temp_remove_and_mtimes(tmp_path: Path) -> None:
    env = LocalEnv()
    target = tmp_path / "log"
    env.append(target, b"a")
    env.append(target, b"b")
    assert target.read_bytes() == b"ab"
    scratch = env.write_temp(b"rules", suffix=".x")
    assert scratch.read_bytes() == b"rules" and scratch.name.endswith(".x")
    env.remove(scratch)
    env.remove(scratch)  # already gone: fine
    assert not scratch.exists()
    os.utime(target, (5, 5))
    assert env.mtimes([str(target), str(tmp_path / "missing")]) == [5.0, 0.0]
