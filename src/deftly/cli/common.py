"""What every `deftly` command shares: consoles, options, building the runtime, and turning
known errors into one clean line (never a traceback)."""

from __future__ import annotations

import inspect
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from deftly.cli import startup

if TYPE_CHECKING:
    from rich.console import Console

    from deftly.policy.approval import Approver
    from deftly.runtime import Runtime

# Only what every command's options and error lines need is imported here: `deftly --help`
# imports this module, so the runtime, the approver and asyncio are imported where used.

T = TypeVar("T")


class _LazyConsole:
    """A rich Console made on its first use: rich costs ~25 ms to import, and
    `deftly tools --json` or `deftly serve` may never print through one."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def _made(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        if name in ("_options", "_console"):  # not set yet (a copy being made)
            raise AttributeError(name)
        return getattr(self._made(), name)


out = cast("Console", _LazyConsole())
err = cast("Console", _LazyConsole(stderr=True))


def escape(markup: str) -> str:
    """rich's markup escape, with rich imported only when something is printed."""
    from rich.markup import escape as rich_escape

    return rich_escape(markup)


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
TrustOpt = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Trust the workspace's own config for this run: its hooks, MCP servers, mode, "
        "allow rules and other settings that run programs or widen permissions apply. "
        "`deftly trust DIR` records it instead.",
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
    """A command line that cannot run as given (an unknown mode, a bad option value): printed as one
    line, exit status 2."""

    pass


def fail(message: str, code: int = USAGE_ERROR) -> typer.Exit:
    """Print `message` as deftly's error on stderr and return the exit to raise with `code`."""
    err.print(f"[red]deftly:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)


CANCEL_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that stop a command the way Ctrl-C does: its calls are cancelled and the
runtime closes, so no command it started outlives it (SIGINT itself arrives as
KeyboardInterrupt; a scope such as serve's may take all of `env.signals.STOP_SIGNALS`)."""


class Stopped(Exception):
    """The command was stopped by a signal (after everything it started was stopped)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def run_async(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine; known errors become a clean message, never a traceback. SIGTERM
    and SIGHUP cancel it like SIGINT does, so the runtime closes what it started."""
    import asyncio

    from deftly.contract.errors import DeftlyError
    from deftly.contract.stack import with_stack_room

    try:
        return with_stack_room(asyncio.run, _stopped_by_signals(main))
    except typer.Exit:
        raise
    except (DeftlyError, UsageError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted", 130) from None
    except Stopped as stop:
        raise fail(f"stopped by {stop}", 128 + stop.signum) from None


async def _stopped_by_signals(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await `main`, cancelling it at the first SIGTERM or SIGHUP (a second one kills at
    once, for a close that hangs)."""
    import asyncio

    from deftly.env.signals import on_stop_signals

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def stop(signum: int) -> None:
        if received:  # asked twice: stop now
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        received.append(signum)
        if task is not None:
            task.cancel()

    loop.call_soon(startup.resume)  # at the latest when the command first waits
    try:
        with on_stop_signals(stop, CANCEL_SIGNALS):
            result = await main()
    except asyncio.CancelledError:
        if received:
            raise Stopped(received[0]) from None
        raise
    if received:
        raise Stopped(received[0])
    return result


def build_runtime(
    workspace: Path,
    mode: str | None,
    yes: bool,
    *,
    interactive: bool = True,
    mcp_config: list[Path] | None = None,
    approver: Approver | None = None,
    trust: bool = False,
    ask_trust: bool = False,
    session_id: str | None = None,
) -> Runtime:
    """`trust`: the --trust option (this run only). `ask_trust`: at a terminal, ask once
    whether to trust a workspace whose own config needs it (yes records it). `session_id`:
    attach to that session (`deftly run --resume`), else a new one."""
    from deftly.runtime import Runtime

    if mode is not None and mode not in ("manual", "yolo", "auto"):
        raise UsageError(f"unknown mode {mode!r}; use manual, yolo or auto")
    at_terminal = interactive and sys.stdin is not None and sys.stdin.isatty()
    if approver is None and not yes and at_terminal:
        # The prompt (and rich's rendering behind it) is imported only when a person can answer.
        from deftly.cli.approver import terminal_approver

        approver = terminal_approver(interactive)
    if not trust and ask_trust and at_terminal and sys.stderr.isatty():
        from deftly.cli.trust_question import ask_to_trust

        ask_to_trust(workspace, err, sys.stdin)
    runtime = Runtime(
        workspace,
        mode=mode,
        approve_asks=yes,
        approver=approver,
        trust=True if trust else None,
        session_id=session_id,
    )
    for path in mcp_config or ():
        runtime.add_mcp_config(path)
    startup.resume()  # the heavy imports are done
    return runtime


def print_diagnostics(runtime: Runtime) -> None:
    """Print the runtime's diagnostics (config, tool and plugin problems) on stderr, errors in red
    and warnings in yellow."""
    for diagnostic in runtime.diagnostics:
        colour = "red" if diagnostic.level == "error" else "yellow"
        err.print(
            f"[{colour}]{diagnostic.level}[/{colour}] "
            f"{escape(diagnostic.source)}: {escape(diagnostic.message)}",
            highlight=False,
        )


def reflow_help(app: typer.Typer) -> None:
    """Let every command's help flow as paragraphs. Typer keeps a docstring's single line
    breaks, which a narrow terminal then wraps again into ragged half-lines."""
    for command in app.registered_commands:
        text = command.help or inspect.getdoc(command.callback) or ""
        command.help = _flowing(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)


def _flowing(text: str) -> str:
    paragraphs = text.split("\n\n")
    return "\n\n".join(
        p if p.startswith("\b") else " ".join(line.strip() for line in p.splitlines())
        for p in paragraphs
    )
