"""The question application itself, in process: keys through a prompt_toolkit pipe, the
drawing into a buffer. The line editing of "Other", the other key names (j/k, Ctrl-N/P,
Ctrl-D), a sub-agent named above its questions."""

from __future__ import annotations

import asyncio
import io
import re
import time
from collections.abc import Callable

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from deftly.cli.run_question import question_app
from deftly.cli.run_question_picker import Answered, Dismissed, Picker
from deftly.session.questions import Choice, Question

COLOURS = Question("Which colour?", (Choice("Red"), Choice("Blue", "cool")), "Colour")
SIZES = Question("Which sizes?", (Choice("S"), Choice("M"), Choice("L")), multi_select=True)
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for the application to have handled the keys sent (generously: a loaded
    machine is slow, never wrong)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


class Session:
    """One run of the application over a pipe, its output kept as text."""

    def __init__(self, *questions: Question, asker: str | None = None) -> None:
        self.pickers = [Picker(question) for question in questions]
        self.out = io.StringIO()
        self.asker = asker

    @property
    def screen(self) -> str:
        return CSI.sub("", self.out.getvalue())

    async def run(self, *steps: str | Callable[[], bool]) -> None:
        """Send each text; wait for each condition."""
        output = Vt100_Output(self.out, lambda: Size(rows=40, columns=100), term="xterm")
        with create_pipe_input() as pipe:
            app = question_app(self.pickers, pipe, output, asker=self.asker)
            running = asyncio.ensure_future(
                app.run_async(handle_sigint=False, set_exception_handler=False)
            )
            await until(lambda: app.is_running, "the application to start")
            for step in steps:
                if isinstance(step, str):
                    pipe.send_text(step)
                else:
                    await until(step, "the keys to be handled")
            await asyncio.wait_for(running, 30)


async def test_the_other_line_is_edited_like_any_input_line() -> None:
    session = Session(COLOURS)
    picker = session.pickers[0]
    await session.run("k\r", lambda: picker.typing, "tal\x1b[D\x1b[De\x1b[Fx\x7f  \r")
    assert picker.outcome == Answered("teal")  # edited with ←, End and Backspace; trimmed


async def test_esc_on_the_other_line_goes_back_to_the_list_with_nothing_typed() -> None:
    session = Session(COLOURS)
    picker = session.pickers[0]
    await session.run(
        "\x1b[A\r",
        lambda: picker.typing,
        "nope",
        lambda: "nope" in session.screen,
        "\x1b",
        lambda: not picker.typing,
        "\r",  # the cursor is still on "Other": the line opens again, empty
        lambda: picker.typing,
        "\r",  # an empty line: back to the list
        lambda: not picker.typing,
        "j\r",
    )
    assert picker.outcome == Answered("Red")


async def test_j_k_and_ctrl_n_p_move_too() -> None:
    session = Session(SIZES)
    picker = session.pickers[0]
    await session.run("j \x0e \x10\x10\r")  # j: M, tick; Ctrl-N: L, tick; Ctrl-P twice: S
    assert picker.outcome == Answered("M, L")
    assert picker.ticked == {1, 2} and picker.cursor == 0


async def test_ctrl_d_at_the_list_dismisses() -> None:
    session = Session(COLOURS, SIZES)
    await session.run("\r", lambda: session.pickers[0].done, "\x04")
    assert session.pickers[0].outcome == Answered("Red")
    assert session.pickers[1].outcome == Dismissed()


async def test_the_drawing_shows_progress_descriptions_and_who_asks() -> None:
    session = Session(COLOURS, SIZES, asker="reviewer-1")
    first = session.pickers[0]
    await session.run(
        lambda: "cool" in session.screen,
        "j\r",
        lambda: first.done and "[ ] M" in session.screen,
        "\x03",
    )
    screen = session.screen
    assert "Agent reviewer-1 asks:" in screen
    assert "[Colour] Which colour?  (1 of 2)" in screen
    assert "Blue  cool" in screen and "Other  type your own answer" in screen
    assert "✔ Colour → Blue" in screen and "Which sizes?  (2 of 2)" in screen
    assert "Space ticks" in screen
    assert session.pickers[1].outcome == Dismissed()
