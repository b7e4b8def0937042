"""Output handling: bounded memory however much a command prints, the log on disk."""

from __future__ import annotations

import hashlib
import time
import tracemalloc
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.env import LocalEnv
from deftly.features.shell.output import OutputLog, decode_tail
from tests.shell.conftest import env_of, read_named

MB = 1_000_000


def test_tail_is_bounded_and_holds_the_newest_bytes(tmp_path: Path) -> None:
    log = OutputLog(LocalEnv(), tmp_path / "t.log", cap_bytes=10, tail_bytes=4, buffer_bytes=8)
    for chunk in (b"ab", b"cdef", b"g", b"hijklmnop"):
        log.feed(chunk)
    assert log.tail() == b"mnop" and log.tail(2) == b"op" and log.tail(0) == b""
    assert log.total == 16 and log.kept == 10 and not log.complete
    assert log.persisted  # the pending buffer overflowed
    log.close()
    assert (tmp_path / "t.log").read_bytes() == b"abcdefghij"


def test_log_file_is_created_only_when_needed(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "t.log"
    log = OutputLog(LocalEnv(), path, cap_bytes=100, tail_bytes=10, buffer_bytes=50)
    log.feed(b"small")
    assert not path.exists() and not log.persisted
    log.persist()
    log.feed(b"-more")
    log.close()
    assert path.read_bytes() == b"small-more"
    assert path.stat().st_mode & 0o777 == 0o600


def test_unwritable_log_is_reported_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    log = OutputLog(LocalEnv(), blocker / "t.log", cap_bytes=100, tail_bytes=10)
    log.feed(b"data")
    log.persist()
    assert not log.persisted and log.error is not None and "could not be written" in log.error
    assert log.tail() == b"data"


def test_decode_tail_drops_a_broken_first_character() -> None:
    assert decode_tail("éa".encode()[1:]) == "a"
    assert decode_tail(b"plain") == "plain"


async def test_200_mb_of_output_with_bounded_memory(shell: Any) -> None:
    rt: Runtime = await shell(output_limit_bytes=0, log_limit_bytes=300 * MB, timeout=300)
    command = "yes 'deftly bounded memory line' | head -c 200000000"
    tracemalloc.start()
    try:
        start = time.monotonic()
        result = await rt.call("Bash", {"command": command})
        elapsed = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not result.is_error, result.text[-500:]
    assert peak < 40 * MB, f"peak Python memory {peak / MB:.1f} MB"
    assert len(result.text) <= rt.config.output.max_chars
    assert "190.7 MiB" in result.text
    log_line = next(x for x in result.text.splitlines() if x.startswith("log_path: "))
    log = Path(log_line.removeprefix("log_path: "))
    assert env_of(rt).stat(log).st_size == 200 * MB
    line = b"deftly bounded memory line\n"
    expected = hashlib.sha256((line * (200 * MB // len(line) + 1))[: 200 * MB]).hexdigest()
    digest = hashlib.sha256()
    with env_of(rt).open_read(log) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == expected
    assert elapsed < 240


async def test_log_limit_keeps_the_start_and_says_so(shell: Any) -> None:
    rt: Runtime = await shell(output_limit_bytes=0, log_limit_bytes=100_000)
    result = await rt.call("Bash", {"command": "seq 1 100000"})
    assert "log_holds: the first 97.7 KiB" in result.text
    log_line = next(x for x in result.text.splitlines() if x.startswith("log_path: "))
    data = read_named(rt, log_line.removeprefix("log_path: "))
    assert len(data) == 100_000 and data.startswith(b"1\n2\n3\n")
    assert result.text.rstrip().endswith("100000")  # the end still reaches the model
