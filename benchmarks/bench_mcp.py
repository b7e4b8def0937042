"""Round trip of a small read through `deftly serve` over stdio, against the floor.

The floor is the smallest possible MCP server written with the same SDK: one tool that
opens the file and returns it. `deftly serve` adds the runtime's whole pipeline (argument
validation, path policy, permission hooks, scheduling, output budget, event fan-out). Both
are driven by the SDK's client over a real stdio pipe, one call at a time, in both
protocol generations. Target: deftly at most 2x the floor.

The read is the built-in Read tool (numbered lines, a status note, the path policy and the
permission gate included).
"""

from __future__ import annotations

import os
import statistics
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
    row(f"deftly serve, {used} call", d_call, "µs", f_call, "target <= 2x")
    row("minimal SDK server, start to first tools/list", f_start * 1e3, "ms")
    row("deftly serve, start to first tools/list", d_start * 1e3, "ms", f_start * 1e3)


if __name__ == "__main__":
    isolate()
    ws = workspace()
    for mode in ("auto", "legacy"):
        measure(mode, ws)
