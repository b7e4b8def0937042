"""The `deftly` command."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from deftly.cli import permissions as permissions_cli
from deftly.cli.permissions import (
    NoticePrinter,
    explanation_json,
    explanation_text,
    terminal_approver,
)
from deftly.cli.render import call_json, render_call, tools_table
from deftly.cli.skills import skills_app
from deftly.contract.errors import DeftlyError
from deftly.execution.calls import Outcome, ToolCall
from deftly.policy.approval import Approver
from deftly.runtime import Runtime

T = TypeVar("T")

app = typer.Typer(
    name="deftly",
    help=(
        "deftly gives a model's tool calls hands: read, edit, search and run, inside a "
        "workspace, behind a permission engine."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

app.add_typer(skills_app)

out = Console()
err = Console(stderr=True)

WorkspaceOpt = Annotated[
    Path,
    typer.Option(
        "--workspace",
        "-w",
        help="The workspace root (default: the current directory).",
        file_okay=False,
        exists=True,
        resolve_path=True,
    ),
]
ModeOpt = Annotated[
    str | None,
    typer.Option(
        "--mode",
        help="Permission mode: manual (ask), yolo or auto. Default: from config, else manual.",
    ),
]
YesOpt = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Approve every call that would ask (never overrides a deny)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON instead of panels.")
]
McpConfigOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--mcp-config",
        help="One more mcp.json file of MCP servers to mount (may be repeated).",
        exists=True,
        dir_okay=False,
        resolve_path=True,
    ),
]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain", help="Also print how the permission decision was made, link by link."
    ),
]

USAGE_ERROR = 2


class UsageError(Exception):
    pass


def fail(message: str, code: int = USAGE_ERROR) -> typer.Exit:
    err.print(f"[red]deftly:[/red] {message}", highlight=False)
    return typer.Exit(code)


def run_async(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine; known errors become a clean message, never a traceback."""
    try:
        return asyncio.run(main())
    except typer.Exit:
        raise
    except (DeftlyError, UsageError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted", 130) from None


def build_runtime(
    workspace: Path,
    mode: str | None,
    yes: bool,
    *,
    interactive: bool = True,
    mcp_config: list[Path] | None = None,
    approver: Approver | None = None,
) -> Runtime:
    if mode is not None and mode not in ("manual", "yolo", "auto"):
        raise UsageError(f"unknown mode {mode!r}; use manual, yolo or auto")
    if approver is None and not yes:
        approver = terminal_approver(interactive)
    runtime = Runtime(workspace, mode=mode, approve_asks=yes, approver=approver)
    for path in mcp_config or ():
        runtime.add_mcp_config(path)
    return runtime


def print_diagnostics(runtime: Runtime) -> None:
    for diagnostic in runtime.diagnostics:
        colour = "red" if diagnostic.level == "error" else "yellow"
        err.print(
            f"[{colour}]{diagnostic.level}[/{colour}] {diagnostic.source}: {diagnostic.message}",
            highlight=False,
        )


@app.command("tools")
def tools_command(
    workspace: WorkspaceOpt = Path("."),
    as_json: JsonOpt = False,
    mcp_config: McpConfigOpt = None,
) -> None:
    """List the active tools with their source (builtin, user, mcp) and disclosure."""

    async def main() -> None:
        async with build_runtime(workspace, None, False, mcp_config=mcp_config) as rt:
            infos = rt.tools()
            print_diagnostics(rt)
            if as_json:
                sys.stdout.write(json.dumps([i.to_json() for i in infos], indent=2) + "\n")
            elif infos:
                out.print(tools_table(infos))
            else:
                out.print("No tools are active in this workspace.")

    run_async(main)


@app.command("call")
def call_command(
    name: Annotated[str, typer.Argument(help="The tool to call, e.g. Read.")],
    arguments: Annotated[str, typer.Argument(help="The arguments as one JSON object.")] = "{}",
    workspace: WorkspaceOpt = Path("."),
    mode: ModeOpt = None,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    mcp_config: McpConfigOpt = None,
    explain: ExplainOpt = False,
) -> None:
    """Run one tool call through the whole pipeline (validation, policy, permissions, hooks).

    A call that needs approval is asked about at the terminal (when stdin is one), approved
    with --yes, or refused with a message that says how to allow it.

    Exit status: 0 when the tool succeeded, 1 when it returned an error, 2 when the call never
    reached the tool (unknown tool, bad arguments, a switched-off tool, a bad option).
    """

    async def main() -> int:
        notices = NoticePrinter(err)
        async with build_runtime(workspace, mode, yes, mcp_config=mcp_config) as rt:
            notices.attach(rt)
            print_diagnostics(rt)
            result = await rt.call(name, arguments, call_id="cli_1")
        record = notices.record_for("cli_1")
        if as_json:
            data = call_json(result)
            if explain:
                data["permission"] = explanation_json(record)
            sys.stdout.write(json.dumps(data) + "\n")
        else:
            if explain:
                out.print(
                    explanation_text(record, result.outcome),
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
            render_call(out, result)
        if result.outcome is Outcome.PREFLIGHT_REJECTED:
            return USAGE_ERROR
        return 1 if result.is_error else 0

    raise typer.Exit(run_async(main))


def read_batch(source: str) -> list[ToolCall]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the batch file {source}: {exc.strerror}") from None
    calls: list[ToolCall] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            problems.append(f'line {number}: expected an object with "name", "arguments" and "id"')
            continue
        arguments = item.get("arguments")
        if arguments is not None and not isinstance(arguments, str | dict):
            problems.append(f'line {number}: "arguments" must be a JSON string or an object')
            continue
        calls.append(ToolCall(str(item.get("id") or f"call_{number}"), item["name"], arguments))
    if problems:
        raise UsageError("the batch has malformed lines:\n  " + "\n  ".join(problems))
    return calls


@app.command("batch")
def batch_command(
    source: Annotated[
        str, typer.Argument(help="A file of JSON lines {id, name, arguments}, or - for stdin.")
    ] = "-",
    workspace: WorkspaceOpt = Path("."),
    mode: ModeOpt = None,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    mcp_config: McpConfigOpt = None,
) -> None:
    """Run many calls as one batch, the way a model's reply would.

    `arguments` is the raw JSON string the model sent (it may be malformed) or an object.
    With --json, prints one line per call in input order:
    {tool_call_id, name, is_error, output, note, truncated, started_at, finished_at}.
    Exit status: 0 when every call succeeded, 1 when any failed, 2 for a malformed batch.
    """

    async def main() -> int:
        calls = read_batch(source)
        async with build_runtime(
            workspace, mode, yes, interactive=source != "-", mcp_config=mcp_config
        ) as rt:
            NoticePrinter(err).attach(rt)
            print_diagnostics(rt)
            results = await rt.run_batch(calls)
        for result in results:
            if as_json:
                sys.stdout.write(
                    json.dumps(call_json(result, with_times=True, with_display=False)) + "\n"
                )
            else:
                render_call(out, result)
        return 1 if any(r.is_error for r in results) else 0

    raise typer.Exit(run_async(main))


permissions_cli.register(app, build_runtime, run_async)
import deftly.cli.mcp  # noqa: E402, F401  (registers `serve` and `mcp`)


def main() -> None:
    """Console-script entry point: no traceback ever reaches the user."""
    try:
        app()
    except SystemExit:
        raise
    except Exception as exc:  # a bug: say so plainly; DEFTLY_DEBUG=1 shows the traceback
        if os.environ.get("DEFTLY_DEBUG"):
            raise
        err.print(
            f"[red]deftly: internal error:[/red] {type(exc).__name__}: {exc}", highlight=False
        )
        err.print("Run again with DEFTLY_DEBUG=1 to see the traceback, and please report it.")
        sys.exit(3)
