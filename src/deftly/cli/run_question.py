"""Questions from the model (AskUserQuestion) answered at the terminal of `deftly run`.

A request's questions are asked one after another in one small prompt_toolkit
application below the session's output (not full screen): the header and question, the
options with their descriptions, and the "Other" entry for the person's own words; the
keys are `run_question_picker.py`'s. Esc or Ctrl-C dismisses the whole request.

The application owns the terminal only while it asks: it puts the terminal in raw mode
and gives it back as it was, so a turn's Ctrl-C (SIGINT, in the terminal's normal mode)
still cancels the turn outside a question; inside one, Ctrl-C is a key that dismisses it.
It never installs signal handlers of its own. The live renderer's output is held back
while it asks, as for an approval, and approvals wait while a question is shown
(`taking_turns`): the terminal asks one thing at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    BufferControl,
    ConditionalContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.markup import escape

from deftly.cli.run_live import LiveRenderer
from deftly.cli.run_question_picker import Answered, Dismissed, Key, Picker
from deftly.contract.identity import MAIN_AGENT
from deftly.policy.approval import (
    ApprovalRequest,
    ApprovalResponse,
    Approver,
    NonInteractiveApprover,
)
from deftly.session.questions import Answers, QuestionRequest, QuestionsUnsupported

log = logging.getLogger(__name__)

OTHER_HINT = "type your own answer"
DISMISSED_LINE = "Questions dismissed: the model is told you did not answer."
WITHDRAWN_LINE = "Questions withdrawn: the call was cancelled."

_STYLE = Style.from_dict(
    {
        "header": "bold ansicyan",
        "question": "bold",
        "cursor": "bold ansicyan",
        "label": "",
        "chosen": "bold",
        "description": "ansibrightblack",
        "hint": "ansibrightblack",
        "answered": "ansigreen",
    }
)


class TerminalAnswerer:
    """The `Answerer` of `deftly run` at a terminal: arrow keys over each question's
    options, read from `stdin` and drawn on `stdout` (the process's, by default). With a
    `renderer`, the session's output waits while a question is asked; `console` gets a
    line per answer."""

    def __init__(
        self,
        console: Console,
        renderer: LiveRenderer | None = None,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.console = console
        self.renderer = renderer
        self.stdin = stdin
        self.stdout = stdout
        self._lock = asyncio.Lock()
        """Held while the terminal asks anything: a question, or an approval `taking_turns`."""

    def taking_turns(self, approver: Approver) -> Approver:
        """`approver`, asking only while no question is shown (and holding questions back
        while it asks): the calls of one reply are prepared while earlier ones run, so an
        approval could otherwise come up in the middle of a question. One that asks nobody
        is returned as it is (the permission gate knows it by its type)."""
        if isinstance(approver, NonInteractiveApprover):
            return approver
        return _TakingTurns(approver, self._lock)

    async def answer(self, request: QuestionRequest) -> Answers | None:
        """Ask each question in turn; the answers, or None when the person dismissed them
        (Esc, Ctrl-C, end of input). What was answered stays on screen as one line each,
        before the output held back meanwhile."""
        pickers = [Picker(question) for question in request.questions]
        if not pickers:
            return None
        async with self._lock:  # one request at a time
            with self._held():
                try:
                    finished = await self._run(pickers, _asker(request))
                except asyncio.CancelledError:
                    self.console.print(f"[yellow]{WITHDRAWN_LINE}[/yellow]", highlight=False)
                    raise
                if not finished:
                    self.console.print(f"[yellow]{DISMISSED_LINE}[/yellow]", highlight=False)
                    return None
                answers: dict[str, str] = {}
                for picker in pickers:
                    assert isinstance(picker.outcome, Answered)
                    answers[picker.question.question] = picker.outcome.text
                    self.console.print(_answer_line(picker), highlight=False)
                return answers

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        if self.renderer is None:
            yield
            return
        with self.renderer.holding():
            yield

    async def _run(self, pickers: list[Picker], asker: str | None) -> bool:
        """Run the application; whether every question was answered."""
        try:
            terminal_in = create_input(self.stdin)
            terminal_out = create_output(self.stdout)
        except Exception as exc:  # no usable terminal after all
            raise QuestionsUnsupported(f"the terminal cannot show questions: {exc}") from exc
        app = question_app(pickers, terminal_in, terminal_out, asker=asker)
        try:
            await app.run_async(handle_sigint=False, set_exception_handler=False)
        except (EOFError, KeyboardInterrupt):
            return False
        except Exception:
            log.exception("the question prompt failed; treating the questions as dismissed")
            return False
        return all(isinstance(picker.outcome, Answered) for picker in pickers)


class _TakingTurns:
    """An approver that asks only while it holds the terminal's lock."""

    def __init__(self, inner: Approver, lock: asyncio.Lock) -> None:
        self.inner = inner
        self.lock = lock

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """Wait for the terminal, then ask `inner`."""
        async with self.lock:
            return await self.inner.request(request)


def _answer_line(picker: Picker) -> str:
    """What stays on screen once a question is answered."""
    assert isinstance(picker.outcome, Answered)
    question = picker.question
    title = question.header or question.question
    return (
        f"[green]✔[/green] [bold]{escape(title)}[/bold] [dim]→[/dim] {escape(picker.outcome.text)}"
    )


class _Asking:
    """The request's pickers and which one is being asked."""

    def __init__(self, pickers: list[Picker], asker: str | None) -> None:
        self.pickers = pickers
        self.asker = asker
        self.index = 0

    @property
    def current(self) -> Picker:
        return self.pickers[self.index]

    def advance(self) -> bool:
        """Move past answered questions; True when the request is over (all answered, or
        one dismissed)."""
        while self.index < len(self.pickers):
            outcome = self.current.outcome
            if outcome is None:
                return False
            if isinstance(outcome, Dismissed):
                return True
            self.index += 1
        self.index = len(self.pickers) - 1
        return True


def _asker(request: QuestionRequest) -> str | None:
    """Which sub-agent asks (None for the session's main agent)."""
    identity = request.identity
    if identity is None or identity.agent_id == MAIN_AGENT:
        return None
    return identity.agent_id


def question_app(
    pickers: list[Picker], stdin: Input, stdout: Output, *, asker: str | None = None
) -> Application[None]:
    """The application that asks `pickers`' questions one after another (`asker`: the
    sub-agent asking, named above them)."""
    asking = _Asking(pickers, asker)
    line = Buffer(multiline=False)
    typing = Condition(lambda: asking.current.typing)
    listing = ~typing
    keys = KeyBindings()

    def after(event: KeyPressEvent) -> None:
        if asking.current.typing:
            event.app.layout.focus(line)
            return
        event.app.layout.focus(choices)
        if asking.advance():
            event.app.exit()

    def bind(key: Key, *names: str) -> None:
        for name in names:

            @keys.add(name, filter=listing)
            def _press(event: KeyPressEvent) -> None:
                asking.current.press(key)
                after(event)

    bind(Key.UP, "up", "k", "c-p")
    bind(Key.DOWN, "down", "j", "c-n")
    bind(Key.TOGGLE, "space")
    bind(Key.ENTER, "enter")
    bind(Key.ESCAPE, "escape")

    @keys.add("enter", filter=typing)
    def _submit(event: KeyPressEvent) -> None:
        asking.current.submit_text(line.text)
        line.reset()
        after(event)

    @keys.add("escape", filter=typing)
    def _leave(event: KeyPressEvent) -> None:
        asking.current.leave_text()
        line.reset()
        after(event)

    @keys.add("c-c")
    @keys.add("c-d", filter=listing)
    def _dismiss(event: KeyPressEvent) -> None:
        asking.current.outcome = Dismissed()
        after(event)

    choices = FormattedTextControl(lambda: _draw(asking), focusable=True, show_cursor=False)
    body = HSplit(
        [
            Window(choices, dont_extend_height=True, wrap_lines=True),
            ConditionalContainer(
                Window(
                    BufferControl(line),
                    height=1,
                    get_line_prefix=lambda *_: [("class:cursor", "    › ")],
                ),
                filter=typing,
            ),
            Window(
                FormattedTextControl(lambda: _hint(asking.current)),
                height=1,
                dont_extend_height=True,
            ),
        ]
    )
    return Application(
        layout=Layout(body, focused_element=choices),
        key_bindings=keys,
        style=_STYLE,
        input=stdin,
        output=stdout,
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
    )


def _draw(asking: _Asking) -> StyleAndTextTuples:
    """The answered questions, then the current one with its entries."""
    shown: StyleAndTextTuples = []
    if asking.asker is not None:
        shown.append(("class:hint", f"Agent {asking.asker} asks:\n"))
    for picker in asking.pickers[: asking.index]:
        if isinstance(picker.outcome, Answered):
            title = picker.question.header or picker.question.question
            shown += [("class:answered", f"✔ {title} → {picker.outcome.text}\n")]
    picker = asking.current
    question = picker.question
    total = len(asking.pickers)
    if question.header:
        shown.append(("class:header", f"[{question.header}] "))
    shown.append(("class:question", question.question))
    if total > 1:
        shown.append(("class:hint", f"  ({asking.index + 1} of {total})"))
    shown.append(("", "\n"))
    for index in range(picker.entries):
        here = index == picker.cursor
        shown.append(("class:cursor", " ❯ " if here else "   "))
        if question.multi_select:
            box = "[x] " if index in picker.ticked else "[ ] "
            shown.append(("class:chosen" if index in picker.ticked else "", box))
        shown.append(("class:chosen" if here else "class:label", picker.label(index)))
        about = OTHER_HINT if index == picker.other else question.options[index].description
        if about:
            shown.append(("class:description", f"  {about}"))
        if index < picker.other:
            shown.append(("", "\n"))
    return shown


def _hint(picker: Picker) -> StyleAndTextTuples:
    if picker.typing:
        said = "Enter answers · an empty line or Esc goes back to the list"
    elif picker.question.multi_select:
        said = "↑/↓ move · Space ticks · Enter confirms · Esc dismisses"
    else:
        said = "↑/↓ move · Enter chooses · Esc dismisses"
    return [("class:hint", f"   {said}")]
