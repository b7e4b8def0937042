"""Round trip of a small read through `deftly serve` over stdio, against the floor.

The floor is the smallest possible MCP server written with the same SDK: one tool that
opens the file and returns it. `deftly serve` adds the runtime's whole pipeline (argument
validation, path policy, permission hooks, scheduling, output budget, event fan-out). Both
are driven over a real stdio pipe, one call at a time, by two clients in the same run:

- a raw JSON-RPC pipe client (a line out, a line back: the servers' own cost shows);
- the SDK's client, in both protocol generations (what a Python host sees).

Targets: a call at most 1.5x the floor; spawn to the first `tools/list` at most 1.2x.

The read is the built-in Read tool (numbered lines, a status note, the path policy and the
permission gate included).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import isolate, row  # noqa: E402

CALLS = 300
WARMUP = 30
DEFTLY = str(Path(sys.executable).with_name("deftly"))


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="deftly-bench-mcp-"))
    (root / "small.txt").write_text("".join(f"line {i}\n" for i in range(40)))
    return root


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = str(ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    return out


async def round_trips(
    params: StdioServerParameters, mode: str, tool: str | None, path: Path
) -> tuple[float, float, str]:
    """(startup seconds to first tools/list, median µs per call, tool used)."""
    started = time.perf_counter()
    async with Client(params, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        startup = time.perf_counter() - started
        name = tool or "Read"
        assert name in names, f"{name} is not served"
        arguments = {"path": str(path)}
        expected = path.read_text()
        samples = []
        for i in range(WARMUP + CALLS):
            begin = time.perf_counter()
            result = await client.call_tool(name, arguments)
            took = time.perf_counter() - begin
            text = result.content[0].text  # type: ignore[union-attr]
            assert not result.is_error and expected.splitlines()[0] in text, text[:200]
            if i >= WARMUP:
                samples.append(took)
    return startup, statistics.median(samples) * 1e6, name


def raw_round_trips(command: list[str], tool: str, path: Path) -> tuple[float, float]:
    """(seconds from spawn to the first tools/list answer, median µs per call), by a client
    that writes JSON-RPC lines to the server's stdin and reads its stdout (handshake era)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env(),
        bufsize=0,
    )
    assert proc.stdin is not None and proc.stdout is not None
    send, lines = proc.stdin, proc.stdout
    ids = iter(range(1, 1_000_000))

    def ask(method: str, params: dict[str, object]) -> dict[str, object]:
        number = next(ids)
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        send.write(json.dumps(message).encode() + b"\n")
        while True:
            answer = json.loads(lines.readline())
            if answer.get("id") == number:
                return dict(answer)

    try:
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        ask("initialize", hello)
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        send.write(json.dumps(note).encode() + b"\n")
        listed = ask("tools/list", {})
        startup = time.perf_counter() - started
        assert tool in json.dumps(listed), f"{tool} is not served"
        call = {"name": tool, "arguments": {"path": str(path)}}
        first = path.read_text().splitlines()[0]
        samples = []
        for i in range(WARMUP + CALLS):
            begin = time.perf_counter()
            answer = ask("tools/call", call)
            took = time.perf_counter() - begin
            assert first in json.dumps(answer), str(answer)[:200]
            if i >= WARMUP:
                samples.append(took)
    finally:
        send.close()
        proc.wait(timeout=60)
    return startup, statistics.median(samples) * 1e6


def measure_raw(ws: Path) -> None:
    small = ws / "small.txt"
    floor_cmd = [sys.executable, str(Path(__file__).with_name("_minimal_read_server.py"))]
    deftly_cmd = [DEFTLY, "serve", "-w", str(ws), "--mode", "auto"]
    f_start, f_call = raw_round_trips(floor_cmd, "read", small)
    d_start, d_call = raw_round_trips(deftly_cmd, "Read", small)
    print(f"MCP over stdio, raw JSON-RPC pipe client: {CALLS} sequential calls, 40-line file")
    row("minimal SDK server, call (floor)", f_call, "µs")
    row("deftly serve, Read call", d_call, "µs", f_call, "target <= 1.5x")
    row("minimal SDK server, spawn to first tools/list", f_start * 1e3, "ms")
    row(
        "deftly serve, spawn to first tools/list",
        d_start * 1e3,
        "ms",
        f_start * 1e3,
        "target <= 1.2x",
    )


def measure(mode: str, ws: Path) -> None:
    small = ws / "small.txt"
    deftly = StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(ws), "--mode", "auto"], env=env()
    )
    floor = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).with_name("_minimal_read_server.py"))]
    )
    f_start, f_call, _ = anyio.run(round_trips, floor, mode, "read", small)
    d_start, d_call, used = anyio.run(round_trips, deftly, mode, None, small)
    print(f"MCP over stdio, protocol mode {mode!r}: {CALLS} sequential calls, 40-line file")
    row("minimal SDK server, call (floor)", f_call, "µs")
    row(f"deftly serve, {used} call", d_call, "µs", f_call, "target <= 1.5x")
    row("minimal SDK server, spawn to first tools/list", f_start * 1e3, "ms")
    row(
        "deftly serve, spawn to first tools/list",
        d_start * 1e3,
        "ms",
        f_start * 1e3,
        "target <= 1.2x",
    )


if __name__ == "__main__":
    isolate()
    ws = workspace()
    measure_raw(ws)
    for mode in ("auto", "legacy"):
        measure(mode, ws)
