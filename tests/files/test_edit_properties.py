"""Property tests: Edit changes only the edited text and round-trips every file format
(UTF-8 with or without a BOM, UTF-16 LE/BE with a BOM; LF, CRLF or mixed endings)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deftly.config.files import FilesConfig
from deftly.env import LocalEnv
from deftly.features.files.edit import EditParams, EditTool
from deftly.features.files.tracker import FileTracker
from deftly.policy import Workspace

TOKEN = "\u27e6TOKEN\u27e7"
plain = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\u27e6\u27e7"),
        st.sampled_from("\t "),
    ),
    max_size=30,
)
ENCODINGS = {
    "utf-8": (b"", "utf-8"),
    "utf-8-bom": (b"\xef\xbb\xbf", "utf-8"),
    "utf-16-le": (b"\xff\xfe", "utf-16-le"),
    "utf-16-be": (b"\xfe\xff", "utf-16-be"),
}
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pure_crlf(text: str) -> bool:
    """Independent of the implementation: CRLF pairs, and no other CR or LF."""
    return (
        "\r\n" in text
        and text.replace("\r\n", "").count("\n") == 0
        and "\r" not in (text.replace("\r\n", ""))
    )


def build(lines: list[str], endings: list[str], final: bool) -> str:
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i < len(lines) - 1 or final:
            out.append(endings[i % len(endings)])
    return "".join(out)


def edit_file(directory: Path, raw: bytes, old: str, new: str) -> tuple[bytes, bool]:
    path = directory / "f.txt"
    path.write_bytes(raw)
    tool = EditTool(LocalEnv(), Workspace(directory), FilesConfig(), FileTracker())
    result = tool.edit(EditParams(path=str(path), old_string=old, new_string=new), path)
    return path.read_bytes(), result.is_error


@SETTINGS
@given(
    lines=st.lists(plain, min_size=1, max_size=12),
    style=st.sampled_from(["lf", "crlf", "mixed"]),
    mixed_endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=2, max_size=5),
    final=st.booleans(),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    where=st.integers(min_value=0, max_value=11),
    new=st.text(alphabet=st.sampled_from("ab \t\n\u00e9\u4e2d"), max_size=12),
)
def test_edit_changes_only_the_old_string_and_keeps_the_format(
    lines: list[str],
    style: str,
    mixed_endings: list[str],
    final: bool,
    encoding: str,
    where: int,
    new: str,
) -> None:
    where %= len(lines)
    lines = list(lines)
    lines[where] = lines[where] + TOKEN
    endings = {"lf": ["\n"], "crlf": ["\r\n"], "mixed": mixed_endings}[style]
    text = build(lines, endings, final)
    bom, codec = ENCODINGS[encoding]
    raw = bom + text.encode(codec)
    with tempfile.TemporaryDirectory() as tmp:
        after, failed = edit_file(Path(tmp), raw, TOKEN, new)
    assert not failed
    replacement = new.replace("\r\n", "\n").replace("\n", "\r\n") if pure_crlf(text) else new
    assert after == bom + text.replace(TOKEN, replacement).encode(codec)


@SETTINGS
@given(
    lines=st.lists(plain.filter(lambda s: s.strip() != ""), min_size=2, max_size=10, unique=True),
    final=st.booleans(),
    bom=st.booleans(),
    start=st.integers(min_value=0, max_value=9),
)
def test_crlf_files_are_edited_through_their_lf_view(
    lines: list[str], final: bool, bom: bool, start: int
) -> None:
    start %= len(lines) - 1
    text = build(lines, ["\r\n"], final)
    view_old = lines[start] + "\n" + lines[start + 1]
    assume(text.replace("\r\n", "\n").count(view_old) == 1)
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    with tempfile.TemporaryDirectory() as tmp:
        after, failed = edit_file(Path(tmp), raw, view_old, "X\nY")
    assert not failed
    expected_view = text.replace("\r\n", "\n").replace(view_old, "X\nY", 1)
    expected = expected_view.replace("\n", "\r\n")
    assert after == (b"\xef\xbb\xbf" if bom else b"") + expected.encode()
    assert b"\r\r\n" not in after


@SETTINGS
@given(
    lines=st.lists(plain, min_size=1, max_size=8),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=4),
    old=plain.filter(bool),
)
def test_refused_edits_leave_the_file_byte_for_byte(
    lines: list[str], endings: list[str], old: str
) -> None:
    text = build(lines, endings, True)
    assume(old not in text and old not in text.replace("\r\n", "\n"))
    raw = text.encode()
    with tempfile.TemporaryDirectory() as tmp:
        after, failed = edit_file(Path(tmp), raw, old, old + "!")
    assert failed and after == raw
