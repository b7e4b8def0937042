"""`deftly serve` answers every request it can read an id from, even one nested too deeply
for the SDK to decode (a client must never wait forever)."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deftly.serve.undecodable import envelope
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _read_response(stdout: Any, wanted: int | str, seconds: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        ready, _, _ = select.select([stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no answer to request {wanted} within {seconds} s"
        line = stdout.readline()
        assert line, "deftly serve closed its output without answering"
        message = json.loads(line)
        if message.get("id") == wanted:
            return message  # type: ignore[no-any-return]


@pytest.mark.parametrize("depth", [900, 5000])
def test_a_deeply_nested_tools_call_gets_a_json_rpc_error(workspace: Path, depth: int) -> None:
    (workspace / "a.txt").write_text("fine\n")
    proc = subprocess.Popen(
        [DEFTLY, "serve", "-w", str(workspace)],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,  # unbuffered: select() then sees every line not yet read
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        proc.stdin.flush()
        assert "result" in _read_response(proc.stdout, 1)
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        deep = "[" * depth + "]" * depth
        proc.stdin.write(
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "Read", '
            b'"arguments": {"path": ' + deep.encode() + b"}}}\n"
        )
        read_call = {"name": "Read", "arguments": {"path": "a.txt"}}
        proc.stdin.write(
            _line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": read_call})
        )
        proc.stdin.flush()
        error = _read_response(proc.stdout, 2)
        assert error["error"]["code"] == -32700
        assert "nested too deeply" in error["error"]["message"]
        fine = _read_response(proc.stdout, 3)  # the server goes on serving
        assert "fine" in json.dumps(fine["result"])
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def test_the_envelope_is_read_at_the_top_level_only() -> None:
    deep = "[" * 3000 + "]" * 3000
    text = (
        '{"params": {"id": 9, "method": "inner", "arguments": {"x": ' + deep + "}}, "
        '"method": "tools/call", "id": "abc"}'
    )
    assert envelope(text) == ("abc", "tools/call")
    assert envelope('{"id": null, "method": "m"}') == (None, "m")
    assert envelope("not json at all") == (None, None)
