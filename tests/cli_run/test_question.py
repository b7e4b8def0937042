"""AskUserQuestion at the terminal of `deftly run`, in a real pty (pexpect), against a
scripted model server: the arrow keys pick, Space ticks, "Other" takes typed words, Esc
and Ctrl-C dismiss, and the model's next request carries the answers as JSON. Without a
terminal (or with --json) the tool is not offered at all."""

from __future__ import annotations

import json
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from deftly.cli.run_question import DISMISSED_LINE
from tests.cli_run.helpers import deftly_run
from tests.cli_run.pty import processes_with, spawn_run, wait_for
from tests.conftest import subprocess_env
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

PROMPT = "›"
DOWN = "\x1b[B"
UP = "\x1b[A"
ENTER = "\r"
ESC = "\x1b"
TOOL = "AskUserQuestion"

COLOUR = {
    "question": "Which colour should the button be?",
    "header": "Colour",
    "options": [
        {"label": "Red", "description": "warm and loud"},
        {"label": "Blue", "description": "calm"},
        {"label": "Green"},
    ],
}
SIZES = {
    "question": "Which sizes do we ship?",
    "header": "Sizes",
    "multi_select": True,
    "options": [{"label": "Small"}, {"label": "Medium"}, {"label": "Large"}],
}


def ask(*questions: dict[str, Any]) -> Any:
    return calls(Call(TOOL, {"questions": list(questions)}, id="ask-1"))


@pytest.fixture
def sessions() -> Iterator[list[pexpect.spawn]]:
    """Children still running at the end are killed (a failed test leaves nothing)."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def interactive(server: ModelServer, workspace: Path, sessions: list[pexpect.spawn]) -> Any:
    child = spawn_run(server, workspace)
    sessions.append(child)
    child.expect(PROMPT)
    return child


def finish(child: pexpect.spawn) -> None:
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def tool_answer(request: dict[str, Any]) -> Any:
    """The AskUserQuestion result in a recorded request, as JSON."""
    message = request["messages"][-1]
    assert message["role"] == "tool" and message["tool_call_id"] == "ask-1"
    return json.loads(message["content"])


def test_the_arrow_keys_move_and_enter_picks(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    with ModelServer([ask(COLOUR), say("Blue it is.")]) as server:
        child = interactive(server, workspace, sessions)
        child.sendline("style the button")
        child.expect("Which colour should the button be")
        child.expect("calm")  # the options' descriptions
        child.expect("Esc dismisses")
        child.send(DOWN + DOWN + UP)  # Red → Blue → Green → Blue
        child.send(ENTER)
        child.expect("Colour.*→.*Blue")  # the line left once answered
        child.expect("Blue it is.")
        finish(child)
    assert TOOL in tool_names(server.requests[0])
    assert tool_answer(server.requests[1]) == {"answers": {COLOUR["question"]: "Blue"}}


def test_multi_select_ticks_with_space_then_the_next_question_takes_other_text(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    with ModelServer([ask(SIZES, COLOUR), say("Noted.")]) as server:
        child = interactive(server, workspace, sessions)
        child.sendline("plan the release")
        child.expect("Which sizes do we ship")
        child.expect(r"1 of 2")
        child.expect("Space ticks")
        child.send(" jj ")  # tick Small, down twice (j), tick Large
        child.expect(r"\[x\].*Large")
        child.send(ENTER)
        child.expect("Which colour should the button be")
        child.expect(r"2 of 2")
        child.expect("Esc dismisses")
        child.send(UP + ENTER)  # up from Red wraps to "Other", which opens a line
        child.expect("Enter answers")
        child.send("teal, like the logo" + ENTER)
        child.expect("Noted.")
        finish(child)
    assert tool_answer(server.requests[1]) == {
        "answers": {SIZES["question"]: "Small, Large", COLOUR["question"]: "teal, like the logo"}
    }


def test_esc_dismisses_and_the_model_is_told_so(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    with ModelServer([ask(COLOUR, SIZES), say("I will pick for now.")]) as server:
        child = interactive(server, workspace, sessions)
        child.sendline("style the button")
        child.expect("Esc dismisses")
        child.send(DOWN + ENTER)  # the first is answered, then Esc on the second
        child.expect("Which sizes do we ship")
        child.expect("Esc dismisses")
        child.send(ESC)
        child.expect("Questions dismissed")
        child.expect("I will pick for now.")
        finish(child)
    result = tool_answer(server.requests[1])
    assert result["answers"] == {} and "dismissed" in result["note"]


def test_ctrl_c_dismisses_a_question_and_still_cancels_the_turn_afterwards(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    marker = f"sleep 30.{random.randrange(10**6):06d}"
    script = [
        ask(COLOUR),
        calls(Call("Bash", {"command": marker})),
        say("Stopped."),
        say("Still here."),
    ]
    with ModelServer(script) as server:
        child = spawn_run(server, workspace, "--yes")
        sessions.append(child)
        child.expect(PROMPT)
        child.sendline("do it")
        child.expect("Esc dismisses")
        child.sendintr()  # a key inside the question: it dismisses, the turn goes on
        child.expect("Questions dismissed")
        child.expect(marker.replace(".", r"\."))
        wait_for(lambda: processes_with(marker), "the sleep to start")
        child.sendintr()  # outside the question: SIGINT cancels the turn, as ever
        child.expect("Cancelling the turn")
        child.expect("the turn was cancelled")
        child.expect(PROMPT)
        assert processes_with(marker) == []
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert tool_answer(server.requests[1])["answers"] == {}


def test_print_mode_at_a_terminal_asks_too(workspace: Path, sessions: list[pexpect.spawn]) -> None:
    with ModelServer([ask(COLOUR), say("Going with green.")]) as server:
        child = spawn_run(server, workspace, "style the button")
        sessions.append(child)
        child.expect("Esc dismisses")
        child.send(DOWN + DOWN + ENTER)
        child.expect("Going with green.")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert tool_answer(server.requests[1]) == {"answers": {COLOUR["question"]: "Green"}}


def test_without_a_terminal_the_tool_is_not_offered(workspace: Path) -> None:
    with ModelServer([say("Fine.")]) as server:
        done = deftly_run(server, workspace, "style the button")
    assert done.returncode == 0, done.stderr
    names = tool_names(server.requests[0])
    assert "Read" in names and TOOL not in names


def test_json_at_a_terminal_does_not_offer_the_tool(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    with ModelServer([say("Fine.")]) as server:
        child = spawn_run(server, workspace, "--json", "style the button")
        sessions.append(child)
        child.expect('"turn_end"')
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    names = tool_names(server.requests[0])
    assert "Read" in names and TOOL not in names


def test_a_call_where_nobody_answers_is_refused_by_name(workspace: Path) -> None:
    with ModelServer([ask(COLOUR), say("I will ask in my reply.")]) as server:
        done = deftly_run(server, workspace, "style the button")
    assert done.returncode == 0, done.stderr
    message = server.requests[1]["messages"][-1]
    assert message["role"] == "tool" and "not available" in message["content"]
    assert DISMISSED_LINE not in done.stderr


WITHDRAW = """
import asyncio, json, signal, termios
from rich.console import Console
from deftly.cli.run_question import TerminalAnswerer
from deftly.session.questions import Choice, Question, QuestionRequest

async def main():
    before = termios.tcgetattr(0)
    question = Question("Pick one?", (Choice("A"), Choice("B")))
    request = QuestionRequest("c1", "AskUserQuestion", (question,))
    task = asyncio.ensure_future(TerminalAnswerer(Console()).answer(request))
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        print("CANCELLED")
    print("MODE_KEPT=" + json.dumps(termios.tcgetattr(0) == before))

asyncio.run(main())
"""


def test_a_withdrawn_question_gives_the_terminal_back_as_it_was(
    sessions: list[pexpect.spawn],
) -> None:
    env = subprocess_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(sys.executable, ["-c", WITHDRAW], env=env, encoding="utf-8", timeout=30)
    sessions.append(child)
    child.expect("Esc dismisses")
    child.kill(signal.SIGUSR1)  # the call is cancelled while the question is shown
    child.expect("Questions withdrawn")
    child.expect("CANCELLED")
    child.expect("MODE_KEPT=true")
    child.expect(pexpect.EOF)


def test_a_question_and_an_approval_in_one_reply_take_turns_at_the_terminal(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    script = [
        calls(
            Call(TOOL, {"questions": [COLOUR]}, id="ask-1"),
            Call("Bash", {"command": "touch painted.txt"}, id="bash-1"),
        ),
        say("Painted."),
    ]
    with ModelServer(script) as server:
        child = interactive(server, workspace, sessions)
        child.sendline("paint it")
        asked = []  # whichever asks first has the terminal; the other waits its turn
        while len(asked) < 2:
            which = child.expect([r"Approve Bash\? \[", "Esc dismisses"])
            asked.append(which)
            if which == 0:
                child.sendline("y")
            else:
                child.send(DOWN + ENTER)
                child.expect("Colour.*→.*Blue")
        assert sorted(asked) == [0, 1]
        child.expect("Painted.")
        finish(child)
    assert (workspace / "painted.txt").exists()
    answers = [m for m in server.requests[1]["messages"] if m.get("tool_call_id") == "ask-1"]
    assert json.loads(answers[0]["content"]) == {"answers": {COLOUR["question"]: "Blue"}}
