"""Write against real files: create, overwrite, append, formats and modes kept, guards."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.contract import FileIODisplay
from tests.files.helpers import call


async def write(rt: Runtime, path: str, content: str, **extra: Any) -> Any:
    return await call(rt, "Write", {"path": path, "content": content, **extra})


async def test_creates_a_file_and_reports_bytes(rt: Runtime, workspace: Path) -> None:
    result = await write(rt, "new.txt", "hello")
    assert not result.is_error and (workspace / "new.txt").read_text() == "hello"
    assert result.text == "Created new.txt: 5 bytes."
    assert isinstance(result.display, FileIODisplay)
    assert result.display.operation == "write" and result.display.content == "hello"


async def test_byte_counts_are_utf8_bytes(rt: Runtime, workspace: Path) -> None:
    assert (await write(rt, "jp.txt", "こんにちは。")).text == "Created jp.txt: 18 bytes."
    assert (await write(rt, "emoji.txt", "hi😀")).text == "Created emoji.txt: 6 bytes."
    assert (await write(rt, "empty.txt", "")).text == "Created empty.txt: 0 bytes."
    assert (workspace / "empty.txt").read_bytes() == b""
    appended = await write(rt, "emoji.txt", "café", mode="append")
    assert appended.text == "Appended 5 bytes to emoji.txt."
    assert (workspace / "emoji.txt").read_text() == "hi😀café"


async def test_append_never_reads_and_creates_missing_files(rt: Runtime, workspace: Path) -> None:
    (workspace / "log.txt").write_text("one")
    await write(rt, "log.txt", "\ntwo", mode="append")
    assert (workspace / "log.txt").read_text() == "one\ntwo"
    created = await write(rt, "fresh.log", "x", mode="append")
    assert not created.is_error and (workspace / "fresh.log").read_text() == "x"


async def test_parents_are_created_and_blocked_parents_explained(
    rt: Runtime, workspace: Path
) -> None:
    result = await write(rt, "deep/er/file.txt", "x")
    assert not result.is_error and (workspace / "deep/er/file.txt").read_text() == "x"
    (workspace / "a-file").write_text("x")
    blocked = await write(rt, "a-file/inner/x.txt", "y")
    assert blocked.is_error and '"a-file" is a file, not a directory' in blocked.text
    (workspace / "dir").mkdir()
    directory = await write(rt, "dir", "y")
    assert directory.is_error and "is a directory" in directory.text


async def test_secrets_and_escapes_are_refused_before_any_write(
    rt: Runtime, workspace: Path
) -> None:
    secret = await write(rt, "id_rsa", "key")
    assert secret.is_error and "secret" in secret.text
    escape = await write(rt, "../outside.txt", "x")
    assert escape.is_error and "outside the workspace" in escape.text
    assert not (workspace / "id_rsa").exists()
    assert not (workspace.parent / "outside.txt").exists()


async def test_overwrite_keeps_mode_bom_crlf_and_utf16(rt: Runtime, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o750)
    await write(rt, "run.sh", "#!/bin/sh\necho new\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text() == "#!/bin/sh\necho new\n"

    crlf = workspace / "win.txt"
    crlf.write_bytes(b"\xef\xbb\xbfold\r\nlines\r\n")
    result = await write(rt, "win.txt", "new\nlines\n")
    assert crlf.read_bytes() == b"\xef\xbb\xbfnew\r\nlines\r\n"
    assert "CRLF" in result.text and "byte-order mark" in result.text

    wide = workspace / "wide.txt"
    wide.write_bytes(b"\xfe\xff" + "alt\n".encode("utf-16-be"))
    result = await write(rt, "wide.txt", "neu\n")
    assert wide.read_bytes() == b"\xfe\xff" + "neu\n".encode("utf-16-be")
    assert "UTF-16 BE" in result.text

    lf = workspace / "unix.txt"
    lf.write_text("a\nb\n")
    await write(rt, "unix.txt", "x\r\ny\r\n")  # an LF file is written as given
    assert lf.read_bytes() == b"x\r\ny\r\n"


async def test_append_follows_crlf_and_utf16(rt: Runtime, workspace: Path) -> None:
    crlf = workspace / "win.log"
    crlf.write_bytes(b"one\r\ntwo\r\n")
    await write(rt, "win.log", "three\n", mode="append")
    assert crlf.read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    wide = workspace / "wide.log"
    wide.write_bytes(b"\xff\xfe" + "a\n".encode("utf-16-le"))
    await write(rt, "wide.log", "b\n", mode="append")
    assert wide.read_bytes() == b"\xff\xfe" + "a\nb\n".encode("utf-16-le")


async def test_new_files_get_the_umask_mode(rt: Runtime, workspace: Path) -> None:
    old = os.umask(0o027)
    try:
        await write(rt, "private.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((workspace / "private.txt").stat().st_mode) == 0o640


async def test_overwrite_is_refused_when_the_file_changed_since_read(
    rt: Runtime, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("v1\n")
    await call(rt, "Read", {"path": "notes.txt"})
    target.write_text("v2 by someone else\n")
    refused = await write(rt, "notes.txt", "v3\n")
    assert refused.is_error and "changed on disk" in refused.text
    assert target.read_text() == "v2 by someone else\n"
    appended = await write(rt, "notes.txt", "more\n", mode="append")
    assert not appended.is_error  # appending does not clobber anything
    await call(rt, "Read", {"path": "notes.txt"})
    assert not (await write(rt, "notes.txt", "v3\n")).is_error


async def test_writing_twice_without_reading_is_fine(rt: Runtime, workspace: Path) -> None:
    assert not (await write(rt, "a.txt", "one")).is_error
    assert not (await write(rt, "a.txt", "two")).is_error
    assert (workspace / "a.txt").read_text() == "two"


async def test_no_temporary_files_are_left_behind(rt: Runtime, workspace: Path) -> None:
    for i in range(5):
        await write(rt, "a.txt", f"round {i}\n")
    assert sorted(os.listdir(workspace)) == ["a.txt"]


def test_unwritable_parent() -> None:
    """Run as an unprivileged user: root may create directories anywhere."""
    from tests.files.unprivileged import call_unprivileged, open_workspace

    workspace = open_workspace()
    locked = workspace / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = call_unprivileged(
            workspace,
            "Write",
            {"path": "locked/sub/x.txt", "content": "y"},
            warmup=[("Write", {"path": "warm.txt", "content": "w"})],
        )
    finally:
        locked.chmod(0o755)
    assert result["is_error"] and "permission denied" in result["text"].lower()
    assert not (locked / "sub").exists()


def _chattr(path: Path, flag: str) -> bool:
    import shutil
    import subprocess

    if not shutil.which("chattr"):
        return False
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


async def test_permission_errors_leave_files_untouched(rt: Runtime, workspace: Path) -> None:
    """A real EPERM, even for root: an immutable file (chattr +i) cannot be replaced."""
    target = workspace / "locked.txt"
    target.write_text("keep\n")
    if not _chattr(target, "+i"):
        pytest.skip("chattr +i is not available on this file system")
    try:
        written = await write(rt, "locked.txt", "lose\n")
        edited = await call(
            rt, "Edit", {"path": "locked.txt", "old_string": "keep", "new_string": "lose"}
        )
        appended = await write(rt, "locked.txt", "more\n", mode="append")
    finally:
        _chattr(target, "-i")
    for result in (written, edited, appended):
        assert result.is_error and "Permission denied" in result.text, result.text
        assert "Traceback" not in result.text
    assert target.read_text() == "keep\n"
    assert sorted(os.listdir(workspace)) == ["locked.txt"]
