"""Edit against real files: literal matching, hints, formats kept, stale guard, atomicity."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.contract import FileIODisplay
from deftly.execution import ToolCall
from tests.files.helpers import call


async def edit(rt: Runtime, path: str, old: str, new: str, **extra: Any) -> Any:
    return await call(rt, "Edit", {"path": path, "old_string": old, "new_string": new, **extra})


async def test_replaces_one_occurrence(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha beta")
    result = await edit(rt, "a.txt", "beta", "gamma")
    assert not result.is_error and target.read_text() == "alpha gamma"
    assert result.text == "Edited a.txt: replaced 1 occurrence (at line 1)."
    assert isinstance(result.display, FileIODisplay)
    assert result.display.operation == "edit" and result.display.before == "beta"


async def test_replacement_is_literal(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha beta gamma")
    await edit(rt, "a.txt", "beta", "$& $$ $` $' \\1 \\g<0>")
    assert target.read_text() == "alpha $& $$ $` $' \\1 \\g<0> gamma"
    every = workspace / "b.txt"
    every.write_text("a b a")
    result = await edit(rt, "b.txt", "a", "$&", replace_all=True)
    assert every.read_text() == "$& b $&"
    assert result.text == "Edited b.txt: replaced 2 occurrences (at lines 1, 1)."
    regex = workspace / "c.txt"
    regex.write_text("x.*y x+y")
    await edit(rt, "c.txt", "x.*y", "ok")
    assert regex.read_text() == "ok x+y"


async def test_crlf_files_are_matched_in_lf_and_written_back_in_crlf(
    rt: Runtime, workspace: Path
) -> None:
    target = workspace / "crlf.txt"
    target.write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    await edit(rt, "crlf.txt", "alpha\nbeta", "one\ntwo")
    assert target.read_bytes() == b"one\r\ntwo\r\ngamma\r\n"
    other = workspace / "crlf2.txt"
    other.write_bytes(b"alpha\r\nbeta\r\n")
    await edit(rt, "crlf2.txt", "alpha\nbeta", "one\r\ntwo")
    assert other.read_bytes() == b"one\r\ntwo\r\n"  # never \r\r\n
    raw = workspace / "crlf3.txt"
    raw.write_bytes(b"alpha\r\nbeta\r\n")
    await edit(rt, "crlf3.txt", "alpha\r\nbeta", "one\ntwo")  # CRLF copied from the raw bytes
    assert raw.read_bytes() == b"one\r\ntwo\r\n"


async def test_mixed_endings_match_byte_for_byte(rt: Runtime, workspace: Path) -> None:
    target = workspace / "mixed.txt"
    target.write_bytes(b"alpha\r\nbeta\ngamma\r\n")
    miss = await edit(rt, "mixed.txt", "alpha\nbeta", "one\ntwo")
    assert miss.is_error and "not found" in miss.text
    assert "CRLF" in miss.text and '"alpha\\r\\nbeta"' in miss.text  # the exact text to use
    assert target.read_bytes() == b"alpha\r\nbeta\ngamma\r\n"
    await edit(rt, "mixed.txt", "alpha\r\nbeta", "one\r\ntwo")
    assert target.read_bytes() == b"one\r\ntwo\ngamma\r\n"


async def test_not_unique_and_not_found(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("same\nother\nsame\n")
    many = await edit(rt, "a.txt", "same", "x")
    assert many.is_error and "occurs 2 times" in many.text and "lines 1, 3" in many.text
    assert "replace_all" in many.text
    missing = await edit(rt, "a.txt", "delta", "x")
    assert missing.is_error and "not found" in missing.text and "Read it again" in missing.text
    assert target.read_text() == "same\nother\nsame\n"


async def test_guards(rt: Runtime, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    target = workspace / "a.txt"
    target.write_text("Hello world!")
    same = await edit(rt, "a.txt", "same", "same")
    assert same.is_error and "identical" in same.text
    empty = await edit(rt, "a.txt", "", "x")
    assert empty.is_error and "old_string" in empty.text
    directory = await edit(rt, "dir", "a", "b")
    assert directory.is_error and "is a directory" in directory.text
    absent = await edit(rt, "nope.txt", "a", "b")
    assert absent.is_error and "does not exist" in absent.text and "Write" in absent.text
    (workspace / "bin.dat").write_bytes(b"\x00\x01\x02abc\x00")
    binary = await edit(rt, "bin.dat", "abc", "x")
    assert binary.is_error and "binary" in binary.text
    assert (workspace / "bin.dat").read_bytes() == b"\x00\x01\x02abc\x00"
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    latin = await edit(rt, "latin.txt", "caf", "x")
    assert latin.is_error and (workspace / "latin.txt").read_bytes() == b"caf\xe9\n"
    deleted = await edit(rt, "a.txt", "world", "")
    assert not deleted.is_error and target.read_text() == "Hello !"


async def test_whitespace_near_miss_gives_lines_and_the_real_text(
    rt: Runtime, workspace: Path
) -> None:
    target = workspace / "tabs.py"
    original = "def f():\n\tif x:\n\t\treturn 1  \n"
    target.write_text(original)
    result = await edit(rt, "tabs.py", "    if x:\n        return 1", "    if y:\n        return 2")
    assert result.is_error
    assert "lines 2-3" in result.text
    assert "indented with 1 tab in the file, 4 spaces in old_string" in result.text
    assert "Nothing was changed" in result.text
    exact = result.text.rsplit("\n", 1)[-1]
    assert json.loads(exact) == "\tif x:\n\t\treturn 1  "
    assert target.read_text() == original  # never guessed
    retry = await edit(rt, "tabs.py", json.loads(exact), "\tif y:\n\t\treturn 2")
    assert not retry.is_error and target.read_text() == "def f():\n\tif y:\n\t\treturn 2\n"


async def test_near_miss_in_several_places_lists_them(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.py").write_text("x  =  1\ny = 2\nx = 1\n")
    result = await edit(rt, "a.py", "x =  1", "x = 3")
    assert result.is_error and "several places" in result.text and "lines 1, 3" in result.text


async def test_read_line_prefixes_are_explained(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.py").write_text("one\ntwo\n")
    result = await edit(rt, "a.py", "1\tone\n2\ttwo", "x")
    assert result.is_error and "line numbers" in result.text and "does occur" in result.text


async def test_keeps_bom_utf16_and_permission_bits(rt: Runtime, workspace: Path) -> None:
    bom = workspace / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfkeep me\r\nand me\r\n")
    bom.chmod(0o751)
    await edit(rt, "bom.txt", "keep me\nand", "kept\nand")
    assert bom.read_bytes() == b"\xef\xbb\xbfkept\r\nand me\r\n"
    assert stat.S_IMODE(bom.stat().st_mode) == 0o751
    wide = workspace / "wide.txt"
    wide.write_bytes(b"\xff\xfe" + "grüße\nwelt\n".encode("utf-16-le"))
    result = await edit(rt, "wide.txt", "welt", "Welt")
    assert not result.is_error
    assert wide.read_bytes() == b"\xff\xfe" + "grüße\nWelt\n".encode("utf-16-le")


async def test_stale_read_guard(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("one two three\n")
    await call(rt, "Read", {"path": "a.txt"})
    target.write_text("one TWO three\n")  # someone else edits it
    stale = await edit(rt, "a.txt", "three", "3")
    assert stale.is_error and "changed on disk since you last read it" in stale.text
    assert target.read_text() == "one TWO three\n"
    await call(rt, "Read", {"path": "a.txt"})
    fresh = await edit(rt, "a.txt", "three", "3")
    assert not fresh.is_error and target.read_text() == "one TWO 3\n"


async def test_touched_but_unchanged_file_is_not_stale(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("same content\n")
    await call(rt, "Read", {"path": "a.txt"})
    os.utime(target, (1_000_000, 1_000_000))  # mtime changes, content does not
    result = await edit(rt, "a.txt", "same", "new")
    assert not result.is_error and target.read_text() == "new content\n"


async def test_own_writes_count_as_read(rt: Runtime, workspace: Path) -> None:
    await call(rt, "Write", {"path": "new.txt", "content": "first\n"})
    await edit(rt, "new.txt", "first", "second")
    result = await edit(rt, "new.txt", "second", "third")
    assert not result.is_error and (workspace / "new.txt").read_text() == "third\n"


async def test_never_read_files_are_not_guarded(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    result = await edit(rt, "a.txt", "x", "y")
    assert not result.is_error


async def test_edits_to_one_file_in_a_batch_run_in_order(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("v1\n")
    calls = [
        ToolCall(
            f"c{i}", "Edit", {"path": "a.txt", "old_string": f"v{i}", "new_string": f"v{i + 1}"}
        )
        for i in range(1, 8)
    ]
    results = await rt.run_batch(calls)
    assert [r.is_error for r in results] == [False] * 7
    assert target.read_text() == "v8\n"


async def test_failed_write_leaves_the_file_untouched(rt: Runtime) -> None:
    """A real failure at write time: the directory is read-only, so the rename fails.
    (Run as an unprivileged user: root writes into read-only directories.)"""
    from tests.files.unprivileged import call_unprivileged, open_workspace

    workspace = open_workspace()
    folder = workspace / "ro"
    folder.mkdir()
    target = folder / "a.txt"
    target.write_text("keep\n")
    target.chmod(0o666)
    folder.chmod(0o555)
    try:
        result = call_unprivileged(
            workspace,
            "Edit",
            {"path": "ro/a.txt", "old_string": "keep", "new_string": "lose"},
            warmup=[("Read", {"path": "ro/a.txt"})],
        )
    finally:
        folder.chmod(0o755)
    assert result["is_error"] and "Permission denied" in result["text"]
    assert target.read_text() == "keep\n"
    assert os.listdir(folder) == ["a.txt"]
