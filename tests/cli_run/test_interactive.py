"""The interactive session in a real pty (pexpect): a prompt, a streamed answer, a tool
call asked about and approved, slash commands, and Ctrl-C during a running Bash."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
from pathlib import Path

import pexpect
import pytest

from tests.cli import DEFTLY
from tests.cli_run.helpers import user_config, user_texts
from tests.cli_run.pty import PROMPT, processes_with, spawn, wait_for
from tests.conftest import subprocess_env
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

SGR = r"(?:\x1b\[[0-9;]*m)*"
"""Any colour or style codes."""


def test_a_conversation_with_an_approval_and_slash_commands(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    script = [
        say("Hello **world**, glad to help.", chunk=3),
        calls(Call("Bash", {"command": "touch made.txt"})),
        say("Made it."),
        calls(Call("Write", {"path": "plan-free.txt", "content": "x"})),
        say("Planning only."),
    ]
    with ModelServer(script) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("hi")
        child.expect(rf"Hello {SGR}world{SGR}, glad to help")  # the Markdown render: no **
        child.expect("1 step")
        child.expect(PROMPT)
        child.sendline("make a file")
        child.expect(r"Approve Bash\? \[")
        assert not (workspace / "made.txt").exists()
        child.sendline("y")
        child.expect("✓")
        child.expect("Made it.")
        child.expect(PROMPT)
        assert (workspace / "made.txt").exists()
        child.sendline("/mode plan")
        child.expect("Plan mode on")
        child.expect(PROMPT)
        child.sendline("write something")
        child.expect("✗ Write failed")
        child.expect("Planning only.")
        child.expect(PROMPT)
        assert not (workspace / "plan-free.txt").exists()
        child.sendline("/mode")
        child.expect(rf"Permission mode: {SGR}manual{SGR} \(plan mode on\)")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert [t.strip() for t in user_texts(server.requests[0])] == ["hi"]
    assert "hi" in [t.strip() for t in user_texts(server.requests[1])]


def test_help_clear_and_an_unknown_command(workspace: Path, sessions: list[pexpect.spawn]) -> None:
    with ModelServer([say("first"), say("second")]) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("/help")
        child.expect("/compact")
        child.expect(PROMPT)
        child.sendline("/frobnicate now")
        child.expect('There is no skill named "frobnicate"')
        child.expect(PROMPT)
        child.sendline("one")
        child.expect("first")
        child.expect(PROMPT)
        child.sendline("/clear")
        child.expect("A fresh conversation")
        child.expect(PROMPT)
        child.sendline("two")
        child.expect("second")
        child.expect(PROMPT)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert [t.strip() for t in user_texts(server.requests[1])] == ["two"]  # cleared


def test_a_skill_runs_as_a_slash_command(workspace: Path, sessions: list[pexpect.spawn]) -> None:
    skill = workspace / ".deftly" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: greet\ndescription: Greet someone.\n---\nSay hello to $ARGUMENTS.\n"
    )
    with ModelServer([say("Hello, Ada!")]) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("/greet Ada")
        child.expect("Hello, Ada!")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    prompt = user_texts(server.requests[0])[-1]
    assert 'the skill "greet"' in prompt and "Say hello to Ada." in prompt
    assert "<skill-loaded" in prompt and 'args="Ada"' in prompt


def test_ctrl_c_cancels_a_running_bash_and_leaves_no_process(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    marker = f"sleep 30.{random.randrange(10**6):06d}"
    script = [
        calls(Call("Bash", {"command": marker})),
        say("Stopped, as you asked."),
        say("Still here."),
    ]
    with ModelServer(script) as server:
        child = spawn(server, workspace, "--yes")
        sessions.append(child)
        child.sendline("wait a while")
        child.expect(rf"●{SGR} {SGR}Bash")
        child.expect(marker.replace(".", r"\."))
        wait_for(lambda: processes_with(marker), "the sleep to start")
        child.sendintr()
        child.expect("Cancelling the turn")
        child.expect("the turn was cancelled")
        child.expect(PROMPT)
        assert processes_with(marker) == []
        child.sendline("are you there?")  # the session goes on after a cancelled turn
        child.expect(r"Stopped, as you asked\.|Still here\.")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0


def test_a_second_ctrl_c_exits(workspace: Path, sessions: list[pexpect.spawn]) -> None:
    marker = f"sleep 30.{random.randrange(10**6):06d}"
    with ModelServer([calls(Call("Bash", {"command": marker})), say("x")]) as server:
        child = spawn(server, workspace, "--yes")
        sessions.append(child)
        child.sendline("wait")
        child.expect(marker.replace(".", r"\."))
        wait_for(lambda: processes_with(marker), "the sleep to start")
        child.sendintr()
        child.expect("Cancelling the turn")
        child.sendintr()
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 130
    assert processes_with(marker) == []


def test_print_mode_ctrl_c_stops_the_turn_with_130_and_no_survivor(workspace: Path) -> None:
    marker = f"sleep 30.{random.randrange(10**6):06d}"
    with ModelServer([calls(Call("Bash", {"command": marker})), say("x")]) as server:
        proc = subprocess.Popen(
            [DEFTLY, "run", "--json", "--yes", "-w", str(workspace), "--base-url",
             server.openai_url, "--model", "scripted", "wait"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=subprocess_env(OPENAI_API_KEY="k"),
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if '"tool_call"' in line:
                    break
            wait_for(lambda: processes_with(marker), "the sleep to start")
            proc.send_signal(signal.SIGINT)
            rest, errors = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, errors
    assert '"stop_reason": "cancelled"' in rest.splitlines()[-1]
    assert "Traceback" not in errors
    assert processes_with(marker) == []


def test_model_compact_multiline_and_history(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    user_config("[loop]\nkeep_recent_steps = 1\n")
    script = [say("first answer"), say("second answer"), say("A summary of what was said.")]
    with ModelServer(script) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.sendline("/model")
        child.expect(rf"Model: {SGR}scripted{SGR} \(openai\)")
        child.expect(PROMPT)
        child.sendline("/model bigger-model")
        child.expect(rf"Model: {SGR}bigger-model{SGR} \(openai\) from the next step on")
        child.expect(PROMPT)
        child.sendline("one\x1b\rtwo")  # Esc Enter: a second line in the same prompt
        child.expect("first answer")
        child.expect(PROMPT)
        child.sendline("three")
        child.expect("second answer")
        child.expect(PROMPT)
        child.sendline("/compact keep the numbers")
        child.expect("older turns compacted")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    assert len(server.requests) == 3 and "keep the numbers" in str(server.requests[2])
    assert server.requests[0]["model"] == "bigger-model"
    assert user_texts(server.requests[0])[-1].strip() == "one\ntwo"
    history = (Path(os.environ["DEFTLY_HOME"]) / "run-history").read_text()
    assert "+one\n+two\n" in history


def test_ctrl_c_at_the_prompt_clears_the_line_then_exits(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    with ModelServer([say("never asked")]) as server:
        child = spawn(server, workspace)
        sessions.append(child)
        child.send("half a thought")
        child.expect("half a thought")
        child.sendcontrol("c")  # clears the typed line; the session goes on
        child.sendline("/help")
        child.expect("/compact")
        child.expect(PROMPT)
        child.sendcontrol("c")  # at the empty prompt: exits
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert server.requests == []


def test_ctrl_c_interrupts_a_compaction_and_the_session_goes_on(
    workspace: Path, sessions: list[pexpect.spawn]
) -> None:
    user_config("[loop]\nkeep_recent_steps = 1\n")
    gate = threading.Event()
    script = [say("one"), say("two"), say("A summary.", gate=gate), say("three")]
    try:
        with ModelServer(script) as server:
            child = spawn(server, workspace)
            sessions.append(child)
            for prompt, answer in (("a", "one"), ("b", "two")):
                child.sendline(prompt)
                child.expect(answer)
                child.expect(PROMPT)
            server.request_seen.clear()
            child.sendline("/compact")
            child.expect("Compacting")
            assert server.request_seen.wait(30)  # the summary is being written
            child.sendintr()
            child.expect("Interrupted.")
            child.expect(PROMPT)
            gate.set()
            child.sendline("c")
            child.expect("three")
            child.expect(PROMPT)
            child.sendline("/exit")
            child.expect(pexpect.EOF)
    finally:
        gate.set()
    assert [t.strip() for t in user_texts(server.requests[3])][-3:] == ["a", "b", "c"]
