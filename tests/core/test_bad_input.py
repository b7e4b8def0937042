"""Input no tool takes (arguments nested thousands deep) is one call's error, never a crash
of its batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from deftly.execution.calls import MAX_DEPTH, ArgumentsTooDeep, parse_arguments


def _nested(depth: int) -> list[Any]:
    root: list[Any] = []
    current = root
    for _ in range(depth - 1):
        child: list[Any] = []
        current.append(child)
        current = child
    return root


async def test_deep_arguments_are_one_error_and_the_rest_of_the_batch_runs(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    rt = await make_runtime()
    deep_text = '{"path": ' + "[" * 5000 + "]" * 5000 + "}"
    results = await rt.run_batch(
        [
            {"id": "1", "name": "Read", "arguments": deep_text},
            {"id": "2", "name": "Read", "arguments": {"path": _nested(3000)}},
            {"id": "3", "name": "Read", "arguments": {"path": "a.txt"}},
        ]
    )
    assert [r.is_error for r in results] == [True, True, False]
    for result in results[:2]:
        assert "nested more than 100 levels deep" in result.text
    assert "hello" in results[2].text


@given(st.integers(min_value=1, max_value=MAX_DEPTH))
def test_nesting_within_the_bound_decodes(depth: int) -> None:
    text = "[" * depth + "]" * depth
    assert parse_arguments(text) == _nested(depth)
    assert parse_arguments({"a": _nested(depth - 1)} if depth > 1 else {"a": 1})


@given(st.integers(min_value=MAX_DEPTH + 1, max_value=3 * MAX_DEPTH), st.booleans())
def test_nesting_beyond_the_bound_is_refused(depth: int, as_text: bool) -> None:
    value: object = "[" * depth + "]" * depth if as_text else _nested(depth)
    try:
        parse_arguments(value)
    except ArgumentsTooDeep:
        return
    raise AssertionError("too deep arguments were accepted")


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"content": "' + "[" * 10_000 + '\\"{{{"}'
    assert parse_arguments(text) == {"content": "[" * 10_000 + '"{{{'}


async def test_binary_bytes_with_a_utf16_zero_pattern_are_binary_not_text(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "blob.bin").write_bytes(b"abc\x00\x01\x02" * 100)
    (workspace / "notes.txt").write_bytes("hello world\nline two\n".encode("utf-16-le") * 20)
    rt = await make_runtime()
    blob = await rt.call("Read", {"path": "blob.bin"})
    notes = await rt.call("Read", {"path": "notes.txt"})
    assert blob.is_error and "is a binary file" in blob.text
    assert not notes.is_error and "hello world" in notes.text


@given(st.binary(min_size=64, max_size=512))
def test_bytes_with_zeros_are_utf16_only_when_they_decode_to_text(data: bytes) -> None:
    from deftly.features.files.encoding import sniff_encoding

    sniff = sniff_encoding(data)
    if sniff.is_utf16 and not sniff.bom:
        text = data[: len(data) - len(data) % 2].decode(sniff.kind, "replace")
        assert any(ch.isspace() for ch in text)
