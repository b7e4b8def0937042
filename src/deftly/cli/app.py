"""The `deftly` command."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from deftly.cli import mcp as mcp_cli
from deftly.cli.common import (
    USAGE_ERROR,
    ExplainOpt,
    JsonOpt,
    McpConfigOpt,
    ModeOpt,
    TrustOpt,
    UsageError,
    WorkspaceOpt,
    YesOpt,
    build_runtime,
    err,
    out,
    print_diagnostics,
    reflow_help,
    run_async,
)
from deftly.cli.permissions import permissions_command
from deftly.cli.run import run_command
from deftly.cli.skills import skills_app
from deftly.cli.trust import trust_command

if TYPE_CHECKING:
    from deftly.execution.calls import CallResult, ToolCall

# `deftly --help` and `deftly --version` import this module and no more: what a command
# runs (the runtime, the renderers, the call pipeline) is imported inside that command.

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
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        import importlib.metadata

        sys.stdout.write(f"deftly {importlib.metadata.version('deftly')}\n")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print deftly's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """deftly gives a model's tool calls hands: read, edit, search and run, inside a
    workspace, behind a permission engine."""


def _show(result: CallResult) -> None:
    """At a terminal, a panel; through a pipe or into a file, the plain text the model
    sees and a status line, never wrapped or cut."""
    from deftly.cli.plain import plain_call
    from deftly.cli.render import render_call

    if sys.stdout.isatty():
        render_call(out, result)
    else:
        sys.stdout.write(plain_call(result))


@app.command("tools")
def tools_command(
    workspace: WorkspaceOpt = Path("."),
    as_json: JsonOpt = False,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
) -> None:
    """List the active tools with their source (builtin, plugin, user, mcp) and disclosure."""

    async def main() -> None:
        async with build_runtime(
            workspace, None, False, mcp_config=mcp_config, trust=trust, ask_trust=True
        ) as rt:
            infos = rt.tools()
            print_diagnostics(rt)
            if as_json:
                sys.stdout.write(json.dumps([i.to_json() for i in infos], indent=2) + "\n")
            elif infos and not sys.stdout.isatty():
                from deftly.cli.plain import plain_tools

                sys.stdout.write(plain_tools(infos))
            elif infos:
                from deftly.cli.render import tools_table

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
    trust: TrustOpt = False,
) -> None:
    """Run one tool call through the whole pipeline (validation, policy, permissions, hooks).

    A call that needs approval is asked about at the terminal (when stdin is one), approved
    with --yes, or refused with a message that says how to allow it.

    Exit status: 0 when the tool succeeded, 1 when it returned an error, 2 when the call never
    reached the tool (unknown tool, bad arguments, a switched-off tool, a bad option).
    """
    from deftly.cli.approver import terminal_approver
    from deftly.cli.notices import NoticePrinter, explanation_json, explanation_text
    from deftly.cli.render import call_json, stream_output
    from deftly.execution.calls import Outcome

    async def main() -> int:
        notices = NoticePrinter(err)
        async with (
            build_runtime(
                workspace,
                mode,
                yes,
                mcp_config=mcp_config,
                trust=trust,
                ask_trust=True,
                approver=terminal_approver(one_shot=True),  # no "yes for this session"
            )
            .without_background()
            .only_mcp_for([name]) as rt
        ):
            notices.attach(rt)
            stream_output(rt)
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
            _show(result)
        if result.outcome is Outcome.PREFLIGHT_REJECTED:
            return USAGE_ERROR
        return 1 if result.is_error else 0

    raise typer.Exit(run_async(main))


def read_batch(source: str) -> list[ToolCall]:
    """The calls of a batch file, one JSON object a line. A line that is not UTF-8 or not
    JSON is a usage error naming the line; a line nested too deep to decode becomes a call
    of its own (its `id` and `name` read from the top level) whose error result says so, so
    the other calls still run."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the batch file {source}: {exc.strerror}") from None
    calls: list[ToolCall] = []
    problems: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                f"line {number}: not valid UTF-8 (byte {raw[exc.start]:#04x} at column "
                f"{exc.start + 1}); save the batch file as UTF-8"
            )
            continue
        if not line.strip():
            continue
        call = _batch_call(line, number, problems)
        if call is not None:
            calls.append(call)
    if problems:
        raise UsageError("the batch has malformed lines:\n  " + "\n  ".join(problems))
    return calls


def _batch_call(line: str, number: int, problems: list[str]) -> ToolCall | None:
    from deftly.execution.calls import (
        ArgumentsParseError,
        ArgumentsTooDeep,
        ToolCall,
        parse_arguments,
    )

    try:
        item: Any = parse_arguments(line)  # strict JSON, its depth bounded before decoding
    except ArgumentsTooDeep:
        return _too_deep_call(line, number, problems)
    except ArgumentsParseError as exc:
        problems.append(f"line {number}: not valid JSON ({exc})")
        return None
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        problems.append(f'line {number}: expected an object with "name", "arguments" and "id"')
        return None
    arguments = item.get("arguments")
    if arguments is not None and not isinstance(arguments, str | dict):
        problems.append(f'line {number}: "arguments" must be a JSON string or an object')
        return None
    return ToolCall(str(item.get("id") or f"call_{number}"), item["name"], arguments)


def _too_deep_call(line: str, number: int, problems: list[str]) -> ToolCall | None:
    """A line too deep to decode, as the call it names: its raw `arguments` text (or the
    whole line) goes to the runtime, which answers that call with the depth error."""
    from deftly.contract.json_scan import scalar, top_level_fields
    from deftly.execution.calls import MAX_DEPTH, ToolCall

    fields = top_level_fields(line, ("id", "name", "arguments"))
    name, call_id = scalar(fields.get("name", "null")), scalar(fields.get("id", "null"))
    if not isinstance(name, str):
        problems.append(
            f"line {number}: nested more than {MAX_DEPTH} levels deep, with no top-level "
            '"name" to report it against; send flat arguments'
        )
        return None
    arguments = fields.get("arguments", line)
    decoded = scalar(arguments)  # arguments sent as a JSON string
    return ToolCall(
        str(call_id) if isinstance(call_id, str | int) and call_id != "" else f"call_{number}",
        name,
        decoded if isinstance(decoded, str) else arguments,
    )


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
    trust: TrustOpt = False,
) -> None:
    """Run many calls as one batch, the way a model's reply would.

    `arguments` is the raw JSON string the model sent (it may be malformed) or an object.
    With --json, prints one line per call in input order:
    {tool_call_id, name, is_error, output, note, truncated, started_at, finished_at}.
    Exit status: 0 when every call succeeded, 1 when any failed, 2 for a malformed batch.
    """
    from deftly.cli.notices import NoticePrinter
    from deftly.cli.render import call_json, stream_output

    async def main() -> int:
        calls = read_batch(source)
        async with build_runtime(
            workspace,
            mode,
            yes,
            interactive=source != "-",
            mcp_config=mcp_config,
            trust=trust,
            ask_trust=True,
        ) as rt:
            NoticePrinter(err).attach(rt)
            stream_output(rt)
            print_diagnostics(rt)
            results = await rt.run_batch(calls)
        for result in results:
            if as_json:
                sys.stdout.write(
                    json.dumps(call_json(result, with_times=True, with_display=False)) + "\n"
                )
            else:
                _show(result)
        return 1 if any(r.is_error for r in results) else 0

    raise typer.Exit(run_async(main))


app.command("run")(run_command)
app.command("serve")(mcp_cli.serve_command)
app.command("permissions")(permissions_command)
app.command("trust")(trust_command)
app.command("rollout")(importlib.import_module("deftly.cli.rollout").rollout_command)
app.add_typer(mcp_cli.mcp_app, name="mcp")
app.add_typer(skills_app)
reflow_help(app)


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
