"""Asking a person at the terminal: the `Approver` the CLI uses when stdin is a TTY.

The prompt shows what the call will do the way a person wants to see it (the diff of an
edit, the command of a shell call, the plan of ExitPlanMode), why it asks, and takes one
of: yes / yes for this session / no / no, with feedback for the model. Input is read
without blocking the event loop, and Ctrl-C or end of input never approves anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from deftly.cli.render import render_display
from deftly.contract.display import PlanReviewDisplay
from deftly.policy.approval import ApprovalRequest, ApprovalResponse, Approver

_YES = {"y", "yes"}
_SESSION = {"a", "always", "s", "session"}
_NO = {"n", "no"}
_FEEDBACK = {"f", "feedback"}


class TerminalApprover:
    """A rich prompt on `console` (stderr by default), answers read from `stream` (stdin)."""

    def __init__(
        self,
        console: Console | None = None,
        stream: TextIO | None = None,
        *,
        one_shot: bool = False,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.stream = stream or sys.stdin
        self.one_shot = one_shot
        """The runtime ends after this call (`deftly call`): "yes for this session" could
        not be kept, so it is not offered."""
        self._lock = asyncio.Lock()
        self._buffer = b""

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Show the call (its diff or command) at the terminal and ask, one question at a time:
        once, for the session (the exact rule or a prefix rule), with a plan's approach, no, or
        no with feedback."""
        async with self._lock:  # one question at a time
            self.console.print(self._panel(request))
            options = _plan_options(request)
            for number, label in enumerate(options, 1):
                self.console.print(f"  [bold]{number}[/bold]  yes, with approach: {escape(label)}")
            session = not isinstance(request.display, PlanReviewDisplay) and not self.one_shot
            rules = _session_keys(request) if session else {}
            lines = ["  [bold]y[/bold]  yes, run it once"]
            for key, rule in rules.items():
                lines.append(
                    f"  [bold]{key}[/bold]  yes, and allow [cyan]{escape(rule)}"
                    "[/cyan] for the rest of this session"
                )
            lines += ["  [bold]n[/bold]  no", "  [bold]f[/bold]  no, and tell the model why"]
            self.console.print("\n".join(lines), highlight=False)
            letters = ["y", *rules, "n", "f"]
            keys = "/".join([*(str(i) for i in range(1, len(options) + 1)), *letters])
            while True:
                answer = await self._ask(f"Approve {request.tool}? [{keys}] ")
                if answer is None:
                    self.console.print("[red]no answer (end of input): not approved[/red]")
                    return ApprovalResponse("reject")
                choice = answer.strip().lower()
                if choice.isdigit() and 1 <= int(choice) <= len(options):
                    return ApprovalResponse("approve", selected=options[int(choice) - 1])
                if choice in _YES:
                    return ApprovalResponse("approve")
                if choice in _SESSION and session:
                    return ApprovalResponse("approve_session", rule=request.session_choices[0])
                if choice in rules:
                    return ApprovalResponse("approve_session", rule=rules[choice])
                if choice in _NO:
                    return ApprovalResponse("reject")
                if choice in _FEEDBACK:
                    feedback = await self._ask("What should the model do instead? ")
                    return ApprovalResponse("reject", feedback=(feedback or "").strip() or None)
                self.console.print(f"Please answer one of {keys}.")

    def _panel(self, request: ApprovalRequest) -> Panel:
        body: list[RenderableType] = [Text(request.action, style="bold")]
        shown = render_display(request.display)
        if shown is not None:
            body += [Text(""), shown]
        body += [Text(""), Text(f"Asking because {request.reason}.", style="dim")]
        return Panel(
            Group(*body),
            title=f"[bold yellow]Approve {escape(request.tool)}?[/bold yellow]",
            title_align="left",
            border_style="yellow",
        )

    async def _ask(self, prompt: str) -> str | None:
        self.console.print(prompt, end="", markup=False, highlight=False)
        self.console.file.flush()
        return await self._read_line()

    async def _read_line(self) -> str | None:
        """One line from the stream, waiting without blocking the loop; None at EOF."""
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):
            line = await asyncio.to_thread(self.stream.readline)
            return line.rstrip("\r\n") if line else None
        while b"\n" not in self._buffer:
            chunk = await _read_ready(fd)
            if not chunk:
                if self._buffer:
                    break
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")


async def _read_ready(fd: int) -> bytes:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except (NotImplementedError, ValueError, OSError):  # no selector support for this fd
        return await asyncio.to_thread(os.read, fd, 4096)
    try:
        await ready
    finally:
        with contextlib.suppress(Exception):
            loop.remove_reader(fd)
    try:
        return os.read(fd, 4096)
    except BlockingIOError:
        return await _read_ready(fd)
    except OSError:
        return b""


def _session_keys(request: ApprovalRequest) -> dict[str, str]:
    """The keys for "yes, for this session": `a` for the exact call, `p` (then `p2`...)
    for each broader rule offered."""
    choices = request.session_choices
    keys = {"a": choices[0]}
    for number, rule in enumerate(choices[1:], 1):
        keys["p" if number == 1 else f"p{number}"] = rule
    return keys


def _plan_options(request: ApprovalRequest) -> list[str]:
    display = request.display
    if isinstance(display, PlanReviewDisplay) and display.options:
        return [option.label for option in display.options]
    return []


def terminal_approver(enabled: bool = True, *, one_shot: bool = False) -> Approver | None:
    """A terminal prompt when a person is there to answer (stdin is a TTY), else None.
    `one_shot`: the runtime ends after one call, so no "yes for this session"."""
    if enabled and sys.stdin is not None and sys.stdin.isatty():
        return TerminalApprover(one_shot=one_shot)
    return None
