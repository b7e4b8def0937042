"""The output budget (spill to disk) and the ResultBuilder."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deftly import ImagePart, TextPart, ToolResult
from deftly.execution import OutputBudget, ResultBuilder, Spiller
from deftly.execution.result_builder import MARKER
from deftly.execution.spill import spill_stem


def spiller(tmp_path: Path, **kw: int) -> Spiller:
    return Spiller(tmp_path / "spill", OutputBudget(**kw))


def saved_path(text: str) -> Path:
    return Path(text.split("output_path: ")[1].split("\n", maxsplit=1)[0])


def test_long_text_is_spilled_with_head_tail_and_pointer(tmp_path: Path) -> None:
    body = "x" * 50_001 + "tail survives on disk"
    result = spiller(tmp_path).apply("Lookup Tool", "call:lookup", ToolResult.error(body))
    assert result.truncated and result.is_error
    assert "50,022 characters" in result.text and "output_path:" in result.text
    assert "Read" in result.text and "Grep" in result.text
    assert result.text.count("x") < 6000
    assert result.text.rstrip().endswith("tail survives on disk")
    path = saved_path(result.text)
    assert path.name.startswith("Lookup_Tool-call_lookup-") and path.read_text() == body
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_short_text_media_and_exempt_results_are_untouched(tmp_path: Path) -> None:
    s = spiller(tmp_path)
    short = ToolResult.ok("y" * 50_000)
    assert s.apply("t", "c", short) is short
    mixed = ToolResult.ok([TextPart("z" * 60_000), ImagePart("aGk=", "image/png")])
    assert s.apply("t", "c", mixed) is mixed
    exempt = ToolResult.ok("z" * 60_000, spill_exempt=True)
    assert s.apply("t", "c", exempt) is exempt


def test_text_parts_are_spilled_as_one_text_and_every_spill_is_a_new_file(tmp_path: Path) -> None:
    s = spiller(tmp_path)
    parts = ToolResult.ok([TextPart("first\n"), TextPart("y" * 50_001)])
    one, two = s.apply("t", "same", parts), s.apply("t", "same", parts)
    assert saved_path(one.text).read_text() == "first\n" + "y" * 50_001
    assert saved_path(one.text) != saved_path(two.text)


def test_retention_cap_is_stated(tmp_path: Path) -> None:
    result = spiller(tmp_path, max_chars=1000, retained_chars=2000).apply(
        "t", "c", ToolResult.ok("a" * 5000)
    )
    assert "first 2,000 characters" in result.text
    assert len(saved_path(result.text).read_text()) == 2000


def test_unwritable_spill_directory_still_bounds_the_output(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = Spiller(blocker / "spill").apply("t", "c", ToolResult.ok("q" * 80_000))
    assert result.truncated and len(result.text) < 6_000
    assert "could not be saved" in result.text


@pytest.mark.parametrize(
    ("name", "call_id", "stem"),
    [
        ("Lookup Tool", "call:1", "Lookup_Tool-call_1"),
        ("", "", "tool-result"),
        ("a" * 90, "b", "a" * 80),
    ],
)
def test_spill_stem(name: str, call_id: str, stem: str) -> None:
    assert spill_stem(name, call_id) == stem


def test_builder_total_cap_marker_and_message() -> None:
    builder = ResultBuilder(max_chars=10)
    assert builder.write("Hello") == 5
    assert builder.write(" world!") == len(MARKER)
    result = builder.ok("Operation completed")
    assert "Hello" + MARKER in result.text
    assert "Operation completed." in result.text
    assert result.text.endswith("Output was cut to fit in one message.")
    assert result.truncated


def test_builder_line_cap_and_line_breaks() -> None:
    builder = ResultBuilder(max_chars=100, max_line_length=20)
    assert builder.write("z" * 49 + "\n") == 21
    assert builder.text == "z" * 6 + MARKER + "\n"
    assert builder.write("pieces of ") + builder.write("one long streamed line\nnext") > 0
    assert builder.text.splitlines()[1] == "pieces of " + MARKER
    assert builder.text.endswith("\nnext")
    small = ResultBuilder(max_chars=6)
    small.write("Hello\nworld")
    small.write("more")
    assert small.text == "Hello\n" + MARKER


def test_builder_plain_success_adds_nothing_but_errors_always_explain() -> None:
    ok = ResultBuilder()
    ok.write("ok\n")
    assert ok.ok("Command executed successfully").text == "ok\n"
    empty = ResultBuilder()
    assert empty.ok("Nothing found").text == "Nothing found."
    bad = ResultBuilder()
    bad.write("Some output")
    result = bad.error("Something went wrong")
    assert result.is_error and result.text == "Some output\nSomething went wrong."


def test_builder_rejects_a_line_cap_shorter_than_the_marker() -> None:
    with pytest.raises(ValueError, match="max_line_length"):
        ResultBuilder(max_line_length=len(MARKER))


@given(
    chunks=st.lists(st.text(alphabet="ab\n\r", max_size=40), max_size=12),
    max_chars=st.integers(min_value=20, max_value=200),
    line=st.integers(min_value=15, max_value=60),
)
def test_builder_never_exceeds_its_caps_and_keeps_untruncated_text(
    chunks: list[str], max_chars: int, line: int
) -> None:
    builder = ResultBuilder(max_chars=max_chars, max_line_length=line)
    for chunk in chunks:
        builder.write(chunk)
    assert builder.n_chars <= max_chars + len(MARKER)
    for produced in builder.text.splitlines():
        assert len(produced) <= line + len(MARKER)
    if not builder.truncated:
        assert builder.text == "".join(chunks)
