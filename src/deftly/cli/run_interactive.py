"""`deftly run` at a terminal without a prompt: a conversation, one turn per line typed.

Input is `prompt_toolkit` (history kept in the data home, Esc then Enter for a new line,
completion of slash commands); it owns the terminal only while it reads a line. A turn
runs with the terminal back in its normal mode, so the terminal approver reads its
answers from stdin with nobody else reading, and Ctrl-C arrives as SIGINT: the first
cancels the turn (running tools are stopped), a second exits. At the prompt, Ctrl-C
clears a typed line, and on an empty line Ctrl-C or Ctrl-D ends the session. The session
consumes the agent's inbox: a cron job that fires while the prompt waits ends the prompt
(what was typed is kept for the next one) and runs as a turn (`run_inbox.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import WordCompleter
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.markup import escape

from deftly.cli.run_inbox import Arrived, fired_line, next_input
from deftly.cli.run_live import LiveRenderer
from deftly.cli.run_slash import COMMANDS, EXIT, SlashContext, run_slash, skill_names
from deftly.cli.run_turn import interruptible, run_turn
from deftly.policy.approval import ApprovalRequest, ApprovalResponse, Approver
from deftly.providers.base import ChatProvider
from deftly.runtime import Runtime
from deftly.session.inbox import Inbox

if TYPE_CHECKING:
    from deftly.agent import Agent

INTERRUPTED = 130


class HeldApprover:
    """The terminal approver, with the session's output held back while it asks (so the
    model's streaming text does not run through the question)."""

    def __init__(self, inner: Approver, renderer: LiveRenderer) -> None:
        self.inner = inner
        self.renderer = renderer

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Ask `inner`, holding the renderer's output until the answer (the question shows
        the call's display, so the renderer does not show it again)."""
        self.renderer.shown_elsewhere(request.call_id)
        with self.renderer.holding():
            return await self.inner.request(request)


def history_file(home: Path) -> Path:
    """Where typed prompts are remembered between sessions."""
    return home / "run-history"


def _key_bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return keys


def _session(runtime: Runtime) -> PromptSession[str]:
    path = history_file(runtime.home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history: FileHistory | InMemoryHistory = FileHistory(str(path))
    except OSError:
        history = InMemoryHistory()
    words = [f"/{name}" for name in (*COMMANDS, "quit", *skill_names(runtime))]
    return PromptSession(
        history=history,
        key_bindings=_key_bindings(),
        completer=WordCompleter(words, sentence=True),
        complete_while_typing=False,
    )


def _cancelling(renderer: LiveRenderer) -> None:
    renderer.end_run()
    renderer.console.print("[yellow]Cancelling the turn… (Ctrl-C again to exit)[/yellow]")


async def interactive(
    agent: Agent,
    runtime: Runtime,
    renderer: LiveRenderer,
    switch_model: Callable[[str], ChatProvider],
) -> int:
    """The session's loop: read a line, run it (a slash command or a turn), again; a
    message in the agent's inbox (a cron job firing) at an idle prompt runs as a turn."""
    console = renderer.console
    context = SlashContext(agent, runtime, console, switch_model, renderer)
    session = _session(runtime)
    provider = agent.provider
    console.print(
        f"[bold]deftly[/bold] · {escape(provider.model)} ({escape(provider.name)}) · "
        f"{escape(str(runtime.workspace_path))} · session {escape(agent.session_id)}\n"
        "[dim]/help lists the commands · Esc Enter adds a line · Ctrl-D ends[/dim]",
        highlight=False,
    )
    detach = runtime.agent.inbox.attach()  # cron jobs fire into this session
    try:
        return await _converse(agent, runtime.agent.inbox, renderer, context, session)
    finally:
        detach()


async def _converse(
    agent: Agent,
    inbox: Inbox,
    renderer: LiveRenderer,
    context: SlashContext,
    session: PromptSession[str],
) -> int:
    """Prompt after prompt until the person ends the session; its exit status."""
    console = renderer.console
    kept = ""
    while True:
        try:
            got = await next_input(session, inbox, kept)
        except (KeyboardInterrupt, EOFError):
            return 0
        kept = ""
        if isinstance(got, Arrived):
            kept = got.kept
            console.print(f"[cyan]{escape(fired_line(got.message.origin))}[/cyan]", highlight=False)
            prompt, origin = got.message.text, got.message.origin
        else:
            line = got.line
            if not line.strip():
                continue
            finished, outcome = await interruptible(run_slash(line, context))
            if not finished:
                console.print("[yellow]Interrupted.[/yellow]")
                continue
            if outcome is EXIT:
                return 0
            if not isinstance(outcome, str):
                continue
            prompt, origin = outcome, {}
        end = await run_turn(agent, prompt, renderer, lambda: _cancelling(renderer), origin=origin)
        if end is None:
            return INTERRUPTED
