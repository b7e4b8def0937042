"""Start-up: what every `deftly` command, every `import deftly` and every `deftly serve`
start pays before any work, each against a floor measured in the same run.

- `import deftly`, timed inside the interpreter; floor: `import json` the same way.
- `from deftly import Runtime, Tool`, and a runtime built and started (`Runtime(ws)`,
  `tools()`), imports included; floor: `from pydantic import BaseModel`.
- `deftly --version`, `deftly --help`, `deftly tools --json` (an empty git workspace),
  spawn to exit; floor: a minimal typer program (two commands, rich help) asked for --help.
- `deftly serve`, spawn to the answer to the first `tools/list` (raw JSON-RPC over stdio);
  floor: the smallest SDK server (`_minimal_read_server.py`) the same way. The warming run
  leaves the listing the later starts answer from while they build their runtime
  (`deftly.serve.early`); bench_mcp.py also times a start in a workspace never served.

Every process runs with its bytecode cached, the way an installed deftly runs: a fresh
`PYTHONPYCACHEPREFIX` is warmed by one run of each program first (the sandbox sets
`PYTHONDONTWRITEBYTECODE`, which would make every run compile deftly's sources again; the
"no bytecode" rows show that cost). Figures are the fastest of several interleaved runs,
the least disturbed by the rest of the machine. Beside each wall figure the benchmark
prints the child's CPU time (user + system, best of the same runs) against the floor's:
on a machine others load, the CPU ratio is the steadier one.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import cached_bytecode, isolate, row  # noqa: E402

REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))
PYTHON = sys.executable
DEFTLY = str(Path(PYTHON).with_name("deftly"))
MINIMAL_SERVER = str(Path(__file__).with_name("_minimal_read_server.py"))

MINIMAL_TYPER = '''
import typer

app = typer.Typer(rich_markup_mode="rich", no_args_is_help=True, add_completion=False)


@app.command()
def tools(workspace: str = ".") -> None:
    """List the tools."""


@app.command()
def call(name: str, arguments: str = "{}") -> None:
    """Call a tool."""


app()
'''

TIMED_IMPORT = """
import time
started = time.perf_counter()
{statement}
print(time.perf_counter() - started)
"""

RUNTIME_BUILD = """
import time
started = time.perf_counter()
import asyncio
from deftly import Runtime

async def main():
    async with Runtime({workspace!r}) as rt:
        assert len(rt.tools()) > 10

asyncio.run(main())
print(time.perf_counter() - started)
"""


def environment(cached: bool, cache: Path) -> dict[str, str]:
    env = cached_bytecode(dict(os.environ), cache)
    if not cached:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(cache / "never-written")
    return env


def spawn_to_exit(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False, timeout=120)
    took = time.perf_counter() - started
    assert done.returncode == 0, (argv, done.stderr.decode()[-2000:])
    return took


def timed_inside(code: str, env: dict[str, str], cwd: Path) -> float:
    done = subprocess.run(
        [PYTHON, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip().splitlines()[-1])


INITIALIZED: list[float] = []
"""Seconds from spawn to the answer to `initialize`, one per `first_tools_list` run."""


def first_tools_list(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Spawn an MCP server on stdio; seconds until its answer to the first tools/list (the
    answer to initialize is noted in INITIALIZED)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    send = [
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in send))
    process.stdin.flush()
    tools = None
    for line in process.stdout:
        message = json.loads(line)
        if message.get("id") == 1:
            INITIALIZED.append(time.perf_counter() - started)
        if message.get("id") == 2:
            tools = message["result"]["tools"]
            break
    took = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=60)
    assert tools, "the server listed no tools"
    return took


def best(measure: list[float]) -> float:
    return min(measure)


def main() -> None:
    home = isolate()
    cache = home / "pycache"
    work = Path(tempfile.mkdtemp(prefix="deftly-bench-startup-"))
    workspace = work / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    typer_app = work / "minimal_typer.py"
    typer_app.write_text(MINIMAL_TYPER)

    programs: dict[str, tuple[str, object]] = {
        "import json": ("inside", TIMED_IMPORT.format(statement="import json")),
        "import deftly": ("inside", TIMED_IMPORT.format(statement="import deftly")),
        "from pydantic import BaseModel": (
            "inside",
            TIMED_IMPORT.format(statement="from pydantic import BaseModel"),
        ),
        "from deftly import Runtime, Tool": (
            "inside",
            TIMED_IMPORT.format(statement="from deftly import Runtime, Tool"),
        ),
        "Runtime built, started, tools() listed": (
            "inside",
            RUNTIME_BUILD.format(workspace=str(workspace)),
        ),
        "python -c pass": ("exit", [PYTHON, "-c", "pass"]),
        "minimal typer program --help": ("exit", [PYTHON, str(typer_app), "--help"]),
        "deftly --version": ("exit", [DEFTLY, "--version"]),
        "deftly --help": ("exit", [DEFTLY, "--help"]),
        "deftly tools --json": ("exit", [DEFTLY, "tools", "--json", "-w", str(workspace)]),
        "minimal SDK server": ("serve", [PYTHON, MINIMAL_SERVER]),
        "deftly serve": ("serve", [DEFTLY, "serve", "-w", str(workspace)]),
    }
    runners = {"inside": timed_inside, "exit": spawn_to_exit, "serve": first_tools_list}

    cpu: dict[str, list[float]] = {name: [] for name in programs}
    initialize: dict[str, list[float]] = {name: [] for name in programs}

    def once(name: str, cached: bool) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        took = _once(name, cached)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if cached:
            cpu[name].append(used)
            if programs[name][0] == "serve":
                initialize[name].append(INITIALIZED[-1])
        return took

    def _once(name: str, cached: bool) -> float:
        kind, what = programs[name]
        env = environment(cached, cache)
        if kind == "inside":
            return timed_inside(str(what), env, workspace)
        runner = runners[kind]
        assert isinstance(what, list)
        return runner(what, env, workspace)  # type: ignore[operator]

    for name in programs:  # warm the bytecode cache
        once(name, True)
    for values in (*cpu.values(), *initialize.values()):
        values.clear()
    samples: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(REPEATS):  # interleaved, so a busy moment hits figure and floor alike
        for name in programs:
            samples[name].append(once(name, True))
    cold = {
        name: best([once(name, False) for _ in range(3)])
        for name in ("deftly --help", "deftly tools --json")
    }
    ms = {name: best(values) * 1e3 for name, values in samples.items()}

    print(f"Start-up, best of {REPEATS} interleaved runs, bytecode cached")
    row("import json (floor)", ms["import json"], "ms")
    row("import deftly", ms["import deftly"], "ms", ms["import json"], "target <= 150 ms")
    row("from pydantic import BaseModel (floor)", ms["from pydantic import BaseModel"], "ms")
    floor = ms["from pydantic import BaseModel"]
    row("from deftly import Runtime, Tool", ms["from deftly import Runtime, Tool"], "ms", floor)
    build = ms["Runtime built, started, tools() listed"]
    row("Runtime(ws) started, tools() listed, imports included", build, "ms", floor)
    row("python -c pass", ms["python -c pass"], "ms")
    typer_floor = ms["minimal typer program --help"]
    row("minimal typer program --help (floor)", typer_floor, "ms")
    row("deftly --version", ms["deftly --version"], "ms", typer_floor)
    row("deftly --help", ms["deftly --help"], "ms", typer_floor, "target <= 250 ms")
    row("deftly tools --json", ms["deftly tools --json"], "ms", typer_floor, "target <= 500 ms")
    server_floor = ms["minimal SDK server"]
    row("minimal SDK server, spawn to first tools/list (floor)", server_floor, "ms")
    row(
        "deftly serve, spawn to first tools/list",
        ms["deftly serve"],
        "ms",
        server_floor,
        "target <= 1.2x",
    )
    init_floor = best(initialize["minimal SDK server"]) * 1e3
    row("minimal SDK server, spawn to initialize answered (floor)", init_floor, "ms")
    init_ms = best(initialize["deftly serve"]) * 1e3
    row("deftly serve, spawn to initialize answered", init_ms, "ms", init_floor)
    cpu_ms = {name: best(values) * 1e3 for name, values in cpu.items()}
    print(f"CPU time of the process (user + system), best of {REPEATS}")
    for name, floor_name in (
        ("import deftly", "import json"),
        ("from deftly import Runtime, Tool", "from pydantic import BaseModel"),
        ("Runtime built, started, tools() listed", "from pydantic import BaseModel"),
        ("deftly --version", "minimal typer program --help"),
        ("deftly --help", "minimal typer program --help"),
        ("deftly tools --json", "minimal typer program --help"),
        ("deftly serve", "minimal SDK server"),
    ):
        row(f"{name} (floor: {floor_name})"[:58], cpu_ms[name], "ms", cpu_ms[floor_name])
    print(
        "Without bytecode (every run compiles deftly's sources, as PYTHONDONTWRITEBYTECODE=1 does)"
    )
    row("deftly --help, no bytecode", cold["deftly --help"] * 1e3, "ms", typer_floor)
    row("deftly tools --json, no bytecode", cold["deftly tools --json"] * 1e3, "ms", typer_floor)


if __name__ == "__main__":
    main()
