"""`deftly run`: a coding agent in this workspace, against any OpenAI-compatible or
Anthropic endpoint.

With a prompt (an argument, or stdin that is not a terminal) it runs one turn: the answer
on stdout, tool activity on stderr (`--json`: every event as a JSON line on stdout).
Without one, at a terminal, it is an interactive session (`run_interactive.py`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deftly.cli.common import (
    USAGE_ERROR,
    McpConfigOpt,
    ModeOpt,
    TrustOpt,
    UsageError,
    WorkspaceOpt,
    YesOpt,
    build_runtime,
    err,
    print_diagnostics,
    run_async,
)

if TYPE_CHECKING:
    from rich.console import Console

    from deftly.agent import Agent
    from deftly.agent.events import AgentEvent
    from deftly.cli.run_live import LiveRenderer
    from deftly.config.models import ModelSettings
    from deftly.features.notify import NotifyAlerts
    from deftly.providers.base import ChatProvider
    from deftly.runtime import Runtime

# The agent, the providers and the renderers are imported when a run starts, not when
# `deftly --help` builds the command line.

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def run_command(
    prompt: Annotated[
        str | None,
        typer.Argument(
            help="What to do. Without it: the prompt on stdin (when stdin is not a terminal), "
            "else an interactive session. `-` reads stdin.",
            show_default=False,
        ),
    ] = None,
    workspace: WorkspaceOpt = Path("."),
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="openai (any OpenAI-compatible server) or anthropic."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="The API's base URL (a local server).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="A \\[models.NAME] profile, or a model id. Default: \\[model]."
        ),
    ] = None,
    mode: ModeOpt = None,
    yes: YesOpt = False,
    max_steps: Annotated[
        int | None,
        typer.Option("--max-steps", min=0, help="Most steps in one turn (0: no limit)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every event as one JSON object a line.")
    ] = False,
    continue_: Annotated[
        bool,
        typer.Option("--continue", "-c", help="Continue this workspace's latest session."),
    ] = False,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue the session with this id.")
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Keep running without a terminal: the prompt (if given), then each prompt "
            "that arrives on its own (a cron job firing) as a turn, until SIGINT or SIGTERM.",
        ),
    ] = False,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
) -> None:
    """Run the agent: one turn for a prompt, or an interactive session at a terminal.

    Exit status: 0 when the model ended its turn, 1 when the turn stopped otherwise (max
    steps, a budget, a provider error after retries, a refusal), 2 for a usage error (a bad
    option, no model configured, no prompt), 130 when interrupted. With --watch it runs
    until stopped: 130 for SIGINT, 0 for SIGTERM.
    """
    if continue_ and resume is not None:
        raise _usage("--continue and --resume cannot be used together; pick one")
    if provider is not None and provider not in ("openai", "anthropic"):
        raise _usage(f"unknown provider {provider!r}; use openai or anthropic")
    text = None if watch and prompt is None else _prompt_text(prompt, as_json)
    interactive = text is None and not watch
    session = _pick_session(workspace, continue_, resume)
    from rich.console import Console

    from deftly.cli.approver import TerminalApprover
    from deftly.cli.render import stream_output
    from deftly.cli.run_render import JsonRenderer, PrintRenderer

    async def main() -> int:
        options = _ModelOptions(model, provider, base_url)
        console = Console()
        renderer = None
        approver = None
        if interactive:
            from deftly.cli.run_interactive import HeldApprover
            from deftly.cli.run_live import LiveRenderer

            renderer = LiveRenderer(console, root=str(workspace))
            renderer.max_steps = max_steps
            if not yes:
                approver = HeldApprover(TerminalApprover(), renderer)
        runtime = build_runtime(
            workspace,
            mode,
            yes,
            mcp_config=mcp_config,
            trust=trust,
            ask_trust=True,
            session_id=session,
            approver=approver,
        )
        _answer_at_terminal(runtime, console, renderer, interactive=interactive, as_json=as_json)
        settings = options.resolve(runtime)
        chosen = options.provider_for(settings)
        async with runtime:
            print_diagnostics(runtime)
            agent = _agent(runtime, chosen, settings, max_steps)
            alerts = _notify_alerts(interactive=interactive, as_json=as_json, console=console)
            async with agent, alerts.attached(runtime.subscribe):
                if interactive:
                    from deftly.cli.run_interactive import interactive as converse

                    assert renderer is not None
                    stop = runtime.subscribe(renderer.runtime_event)
                    try:
                        return await converse(
                            agent, runtime, renderer, lambda name: options.switch(runtime, name)
                        )
                    finally:
                        stop()
                if not as_json:
                    stream_output(runtime)
                show: Callable[[AgentEvent], None] = (
                    JsonRenderer(sys.stdout)
                    if as_json
                    else PrintRenderer(
                        sys.stdout,
                        sys.stderr,
                        max_steps=max_steps,
                        root=str(runtime.workspace_path),
                    )
                )
                if watch:
                    from deftly.cli.run_watch import watch_turns

                    return await watch_turns(agent, text, show, _say, announce=not as_json)
                assert text is not None
                return await _one_turn(agent, text, show)

    raise typer.Exit(run_async(main))


def _notify_alerts(*, interactive: bool, as_json: bool, console: Console) -> NotifyAlerts:
    """How NotifyUser reaches the person: at the interactive terminal a line, the bell and a
    desktop notification (where notify-send can show one); in print mode a line on stderr
    (and the bell when stderr is a terminal); with --json the `notice` event."""
    from deftly.features.notify import DesktopNotifier, NotifyAlerts

    if interactive:
        return NotifyAlerts(
            shown="a line in the terminal", bell=console.file, desktop=DesktopNotifier.find()
        )
    if as_json:
        return NotifyAlerts(shown="a notice event in the --json output")
    return NotifyAlerts(shown="a line on stderr", bell=sys.stderr if sys.stderr.isatty() else None)


def _answer_at_terminal(
    runtime: Runtime,
    console: Console,
    renderer: LiveRenderer | None,
    *,
    interactive: bool,
    as_json: bool,
) -> None:
    """The terminal answers AskUserQuestion in an interactive session, and in print mode
    when stdin and stdout are terminals (not with --json; the answers' lines then go to
    stderr with the other activity); else nobody does, so the tool is not offered. Its
    questions and the approvals take turns at the terminal."""
    from rich.console import Console

    from deftly.cli.run_question import TerminalAnswerer

    if interactive:
        answerer = TerminalAnswerer(console, renderer)
    elif as_json or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    else:
        answerer = TerminalAnswerer(Console(stderr=True))
    runtime.approver = answerer.taking_turns(runtime.approver)
    runtime.answerer = answerer


def _say(line: str) -> None:
    """A line of activity on stderr (print mode)."""
    print(line, file=sys.stderr, flush=True)


def _usage(message: str) -> typer.Exit:
    err.print(f"[red]deftly:[/red] {message}", highlight=False)
    return typer.Exit(USAGE_ERROR)


def _prompt_text(prompt: str | None, as_json: bool) -> str | None:
    """The turn's prompt, or None for an interactive session (a usage error when there is
    neither a prompt nor a terminal)."""
    if prompt is not None and prompt != "-":
        if not prompt.strip():
            raise _usage("the prompt is empty; say what to do")
        return prompt
    if prompt == "-" or not sys.stdin.isatty():
        text = sys.stdin.read()
        if not text.strip():
            raise _usage(
                "the prompt on stdin is empty; pipe in what to do, or give it as an argument"
            )
        return text
    if as_json:
        raise _usage("--json runs one turn: give the prompt as an argument or on stdin")
    if not sys.stdout.isatty():
        raise _usage(
            "no prompt, and stdout is not a terminal for an interactive session; give the "
            "prompt as an argument or on stdin"
        )
    return None


def _pick_session(workspace: Path, continue_: bool, resume: str | None) -> str | None:
    """The session to attach to: --resume's, the latest for --continue, else a new one."""
    from deftly.agent.transcript import latest_session, transcript_path
    from deftly.session.paths import data_home, session_dir

    home = data_home()
    if continue_:
        found = latest_session(workspace, home)
        if found is None:
            raise _usage(
                f"there is no earlier session in {workspace} to continue; run without "
                "--continue to start one"
            )
        return found
    if resume is None:
        return None
    if not _SESSION_ID.match(resume):
        raise _usage(f"{resume!r} is not a session id (they look like 20260102-150405-a1b2c3)")
    if not transcript_path(session_dir(workspace, resume, home), "main").exists():
        raise _usage(
            f"no session {resume} with a conversation in {workspace}; check the id (each "
            "run's --json turn_end says it), or use --continue for the latest"
        )
    return resume


class _ModelOptions:
    """The model the command line asks for, resolved against the workspace's config."""

    def __init__(self, model: str | None, provider: str | None, base_url: str | None) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url

    def resolve(self, runtime: Runtime, name: str | None = None) -> ModelSettings:
        from deftly.agent.models import ModelError, resolve_model

        try:
            return resolve_model(
                runtime.config,
                name if name is not None else self.model,
                provider=self.provider,
                base_url=self.base_url,
            )
        except ModelError as exc:
            raise UsageError(str(exc)) from None

    def provider_for(self, settings: ModelSettings) -> ChatProvider:
        from deftly.agent.models import ModelError, make_provider

        try:
            return make_provider(settings)
        except ModelError as exc:
            raise UsageError(str(exc)) from None

    def switch(self, runtime: Runtime, name: str) -> ChatProvider:
        """`/model NAME`: a profile uses its own provider and URL; a model id keeps the
        command line's."""
        from deftly.agent.models import make_provider, resolve_model

        if name in runtime.config.models:
            return make_provider(resolve_model(runtime.config, name))
        return make_provider(
            resolve_model(runtime.config, name, provider=self.provider, base_url=self.base_url)
        )


def _agent(
    runtime: Runtime, provider: ChatProvider, settings: ModelSettings, max_steps: int | None
) -> Agent:
    from deftly.agent import Agent
    from deftly.scale.ray_children import children_backend

    return Agent(
        runtime,
        provider,
        max_steps=max_steps,
        context_window=settings.context_window,
        children_backend=children_backend(runtime.config.agents),
    )


async def _one_turn(agent: Agent, prompt: str, show: Callable[[AgentEvent], None]) -> int:
    """Run one turn; its exit status."""
    from deftly.cli.run_render import INTERRUPTED, exit_code
    from deftly.cli.run_turn import run_turn

    end = await run_turn(agent, prompt, show)
    if end is None:
        err.print("[red]deftly:[/red] interrupted", highlight=False)
        return INTERRUPTED
    return exit_code(end)
