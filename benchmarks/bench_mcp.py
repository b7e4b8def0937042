"""Round trip of a small read through `deftly serve` over stdio, against the floor.

The floor is the smallest possible MCP server written with the same SDK: one tool that
opens the file and returns it. `deftly serve` adds the runtime's whole pipeline (argument
validation, path policy, permission hooks, scheduling, output budget, event fan-out). Both
are driven over a real stdio pipe, one call at a time, by two clients in the same run:

- a raw JSON-RPC pipe client (a line out, a line back: the servers' own cost shows);
- the SDK's client, in both protocol generations (what a Python host sees).

Both run with their bytecode cached (`cached_bytecode`), warmed by one untimed spawn each;
that spawn also leaves deftly the listing a later start answers `tools/list` from while it
builds its runtime (`deftly.serve.early`). A third spawn row is a start without one (a
workspace never served before), for comparison.
The two servers are measured in turn, never one after the other: spawns alternate (floor,
deftly, floor, ...; the median of each), and both stay open while each call to deftly
follows one to the floor, so a change in the machine's load weighs on both alike.

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
from collections.abc import Callable
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import cached_bytecode, isolate, row  # noqa: E402

CALLS = 1000
WARMUP = 30
SPAWNS = 5
DEFTLY = str(Path(sys.executable).with_name("deftly"))
FLOOR = [sys.executable, str(Path(__file__).with_name("_minimal_read_server.py"))]


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="deftly-bench-mcp-"))
    (root / "small.txt").write_text("".join(f"line {i}\n" for i in range(40)))
    return root


BYTECODE = Path(tempfile.mkdtemp(prefix="deftly-bench-pycache-"))


def env() -> dict[str, str]:
    out = cached_bytecode(dict(os.environ), BYTECODE)
    out["PYTHONPATH"] = str(ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    return out


class RawServer:
    """A server spawned on a pipe, spoken to in JSON-RPC lines (handshake era). Its answers
    are read through a buffer, as every real client reads them: an unbuffered pipe's
    `readline` makes one system call per byte, which charged each server about 1 µs per
    byte of its answers (deftly's tool list is 53 kB, the floor's 0.2 kB)."""

    def __init__(self, command: list[str]) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env(),
        )
        self.ids = iter(range(1, 1_000_000))
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        self.ask("initialize", hello)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.listed = json.dumps(self.ask("tools/list", {}))
        self.startup = time.perf_counter() - started
        """Seconds from spawn to the answer to the first tools/list."""

    def send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict[str, object]) -> dict[str, object]:
        assert self.proc.stdout is not None
        number = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == number:
                return dict(answer)

    def cpu_seconds(self) -> float:
        """The server's CPU time so far (user + system), from /proc (0 where there is none)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def spawn_times(commands: dict[str, list[str] | Callable[[], list[str]]]) -> dict[str, float]:
    """Median seconds from spawn to the first tools/list answer, the servers spawned in
    turn (floor, deftly, floor, ...) so both see the same machine. A command given as a
    function is asked for its argv at each spawn."""

    def argv(command: list[str] | Callable[[], list[str]]) -> list[str]:
        return command() if callable(command) else command

    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        RawServer(argv(command)).close()  # untimed: writes the bytecode (and the listing)
    for _ in range(SPAWNS):
        for name, command in commands.items():
            server = RawServer(argv(command))
            times[name].append(server.startup)
            server.close()
    return {name: statistics.median(values) for name, values in times.items()}


def raw_calls(
    servers: dict[str, tuple[RawServer, str]], path: Path
) -> tuple[dict[str, float], dict[str, float]]:
    """Median µs per tools/call, the servers called in turn, one call each per round; and
    each server's CPU µs per call over the same calls (steadier on a loaded machine)."""
    first = path.read_text().splitlines()[0]
    samples: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, float] = {}
    for i in range(WARMUP + CALLS):
        if i == WARMUP:
            cpu = {name: server.cpu_seconds() for name, (server, _) in servers.items()}
        for name, (server, tool) in servers.items():
            call = {"name": tool, "arguments": {"path": str(path)}}
            begin = time.perf_counter()
            answer = server.ask("tools/call", call)
            took = time.perf_counter() - begin
            assert first in json.dumps(answer), str(answer)[:200]
            if i >= WARMUP:
                samples[name].append(took)
    used = {name: (s.cpu_seconds() - cpu[name]) / CALLS * 1e6 for name, (s, _) in servers.items()}
    return {name: statistics.median(values) * 1e6 for name, values in samples.items()}, used


def measure_raw(ws: Path) -> None:
    small = ws / "small.txt"
    commands = {"floor": FLOOR, "deftly": [DEFTLY, "serve", "-w", str(ws), "--mode", "auto"]}

    def never_served() -> list[str]:
        return [DEFTLY, "serve", "-w", str(workspace()), "--mode", "auto"]

    starts = spawn_times({**commands, "first": never_served})
    floor, ours = RawServer(commands["floor"]), RawServer(commands["deftly"])
    try:
        assert '"Read"' in ours.listed, "Read is not served"
        calls, cpu = raw_calls({"floor": (floor, "read"), "deftly": (ours, "Read")}, small)
    finally:
        floor.close()
        ours.close()
    print(
        f"MCP over stdio, raw JSON-RPC pipe client: {CALLS} calls to each server in turn, "
        f"40-line file; spawn: median of {SPAWNS}, in turn"
    )
    row("minimal SDK server, call (floor)", calls["floor"], "µs")
    row("deftly serve, Read call", calls["deftly"], "µs", calls["floor"], "target <= 1.5x")
    row("minimal SDK server, CPU per call (floor)", cpu["floor"], "µs")
    row("deftly serve, CPU per Read call", cpu["deftly"], "µs", cpu["floor"])
    row("minimal SDK server, spawn to first tools/list", starts["floor"] * 1e3, "ms")
    row(
        "deftly serve, spawn to first tools/list",
        starts["deftly"] * 1e3,
        "ms",
        starts["floor"] * 1e3,
        "target <= 1.2x",
    )
    row(
        "deftly serve, the same in a workspace never served",
        starts["first"] * 1e3,
        "ms",
        starts["floor"] * 1e3,
    )


async def sdk_calls(
    floor: StdioServerParameters, ours: StdioServerParameters, mode: str, path: Path
) -> dict[str, float]:
    """Median µs per call through the SDK's client, both servers open, called in turn."""
    expected = path.read_text().splitlines()[0]
    arguments = {"path": str(path)}
    samples: dict[str, list[float]] = {"floor": [], "deftly": []}
    async with Client(floor, mode=mode) as low, Client(ours, mode=mode) as high:
        assert "Read" in [t.name for t in (await high.list_tools()).tools], "Read is not served"
        clients = {"floor": (low, "read"), "deftly": (high, "Read")}
        for i in range(WARMUP + CALLS):
            for name, (client, tool) in clients.items():
                begin = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                took = time.perf_counter() - begin
                text = result.content[0].text  # type: ignore[union-attr]
                assert not result.is_error and expected in text, text[:200]
                if i >= WARMUP:
                    samples[name].append(took)
    return {name: statistics.median(values) * 1e6 for name, values in samples.items()}


def measure(mode: str, ws: Path) -> None:
    deftly = StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(ws), "--mode", "auto"], env=env()
    )
    floor = StdioServerParameters(command=FLOOR[0], args=FLOOR[1:], env=env())
    calls = anyio.run(sdk_calls, floor, deftly, mode, ws / "small.txt")
    print(f"MCP over stdio, SDK client, protocol mode {mode!r}: {CALLS} calls to each in turn")
    row("minimal SDK server, call (floor)", calls["floor"], "µs")
    row("deftly serve, Read call", calls["deftly"], "µs", calls["floor"], "target <= 1.5x")


if __name__ == "__main__":
    isolate()
    ws = workspace()
    measure_raw(ws)
    for mode in ("auto", "legacy"):
        measure(mode, ws)
