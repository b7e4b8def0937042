"""`deftly run PROMPT` as a script runs it: the real binary, no terminal, a scripted model
server on 127.0.0.1 behind the real openai SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import run_deftly
from tests.cli_run.helpers import (
    closed_port_url,
    deftly_run,
    json_lines,
    user_config,
    user_texts,
)
from tests.scripted.script import Call, Fail, Reply, Say, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env


def test_the_answer_goes_to_stdout_and_the_tool_activity_to_stderr(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    script = [Reply((Say("Let me look."), Call("Read", {"path": "a.txt"}))), say("It says hello.")]
    with ModelServer(script) as server:
        done = deftly_run(server, workspace, "what is in a.txt?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says hello.\n"
    assert done.stderr.splitlines()[-2:] == ["Let me look.", "✓ Read: a.txt"]
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "hello" in tool_message["content"]


def test_the_prompt_may_come_on_stdin(workspace: Path) -> None:
    with ModelServer([say("Hi there.")]) as server:
        done = deftly_run(server, workspace, stdin="say hi\n")
    assert (done.returncode, done.stdout) == (0, "Hi there.\n")
    assert user_texts(server.requests[0])[-1].strip() == "say hi"


def test_json_prints_one_event_a_line_and_turn_end_last(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    script = [
        Reply((Say("Reading."), Call("Read", {"path": "a.txt"}, id="r1")), chunk=3),
        say("Done: hello.", chunk=2),
    ]
    with ModelServer(script) as server:
        done = deftly_run(server, workspace, "--json", "read a.txt")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    types = [line["type"] for line in lines]
    assert "text_delta" not in types and "reasoning_delta" not in types
    assert types[0] == "turn_start" and types[-1] == "turn_end"
    assert types.count("turn_end") == 1
    call = next(line for line in lines if line["type"] == "tool_call")
    assert {k: call[k] for k in ("id", "name", "arguments")} == {
        "id": "r1",
        "name": "Read",
        "arguments": {"path": "a.txt"},
    }
    result = next(line for line in lines if line["type"] == "tool_result")
    assert (result["id"], result["name"], result["is_error"]) == ("r1", "Read", False)
    assert "hello" in result["output"]
    assert [line["text"] for line in lines if line["type"] == "text"] == [
        "Reading.",
        "Done: hello.",
    ]
    end = lines[-1]
    assert end["stop_reason"] == "end_turn" and end["text"] == "Done: hello."
    assert end["steps"] == 2 and end["usage"]["input_tokens"] == 200
    assert end["session_id"]


def test_max_steps_stops_the_turn_with_exit_1(workspace: Path) -> None:
    loop = [calls(Call("Glob", {"pattern": f"*{n}"})) for n in range(3)]
    with ModelServer(loop) as server:
        done = deftly_run(server, workspace, "--json", "--max-steps", "1", "look around")
    assert done.returncode == 1, done.stderr
    end = json_lines(done.stdout)[-1]
    assert (end["type"], end["stop_reason"], end["steps"]) == ("turn_end", "max_steps", 1)
    assert len(server.requests) == 1
    with ModelServer(loop) as server:
        plain = deftly_run(server, workspace, "--max-steps", "1", "look around")
    assert plain.returncode == 1
    assert "stopped after 1 steps" in plain.stderr and "--max-steps 1" in plain.stderr
    assert "Traceback" not in plain.stderr


def test_a_provider_error_is_one_line_and_exit_1(workspace: Path) -> None:
    with ModelServer([Fail(404, {"error": {"message": "no such model"}})]) as server:
        done = deftly_run(server, workspace, "hello")
    assert done.returncode == 1
    assert done.stdout == ""
    line = done.stderr.splitlines()[-1]
    assert line.startswith("deftly: ") and "scripted" in line
    assert "Traceback" not in done.stderr


def test_an_unreachable_endpoint_is_a_clear_error(workspace: Path) -> None:
    user_config("[loop]\nmax_attempts_per_step = 1\n")
    done = run_deftly(
        "run", "hello", "-w", str(workspace), "--base-url", closed_port_url(),
        "--model", "scripted", "--json", OPENAI_API_KEY="k",
    )  # fmt: skip
    assert done.returncode == 1
    end = json_lines(done.stdout)[-1]
    assert end["stop_reason"] == "error"
    assert "127.0.0.1" in end["error"] and "Traceback" not in done.stderr


def test_no_model_configured_is_a_usage_error(workspace: Path) -> None:
    done = run_deftly("run", "hello", "-w", str(workspace), OPENAI_API_KEY="k")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("deftly: ") and "model" in done.stderr
    assert "[model]" in done.stderr  # the message is printed as written, not as markup
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--continue", "--resume", "x-1", "hi"], "cannot be used together"),
        (["--provider", "mistral", "hi"], "unknown provider"),
        (["--mode", "reckless", "hi"], "unknown mode"),
        (["--continue", "hi"], "no earlier session"),
        (["--resume", "20200101-000000-abcdef", "hi"], "no session 20200101-000000-abcdef"),
        (["--resume", "../etc", "hi"], "not a session id"),
        ([], "the prompt on stdin is empty"),
        (["   "], "the prompt is empty"),
    ],
)
def test_usage_errors_exit_2_with_one_line(workspace: Path, args: list[str], words: str) -> None:
    with ModelServer([say("never")]) as server:
        done = deftly_run(server, workspace, *args)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and done.stderr.startswith("deftly: ")
    assert server.requests == []


def test_continue_and_resume_send_the_earlier_history(workspace: Path) -> None:
    with ModelServer([say("The answer is 42.")]) as server:
        first = deftly_run(server, workspace, "--json", "what is the answer?")
    session = json_lines(first.stdout)[-1]["session_id"]
    with ModelServer([say("Still 42.")]) as server:
        second = deftly_run(server, workspace, "--continue", "--json", "and again?")
    assert second.returncode == 0, second.stderr
    assert json_lines(second.stdout)[-1]["session_id"] == session
    messages = server.requests[0]["messages"]
    said = [m.get("content") for m in messages if m["role"] == "assistant"]
    assert said == ["The answer is 42."]
    assert [t.strip() for t in user_texts(server.requests[0])][-2:] == [
        "what is the answer?",
        "and again?",
    ]
    with ModelServer([say("42, a third time.")]) as server:
        third = deftly_run(server, workspace, "--resume", session, "once more?")
    assert third.returncode == 0, third.stderr
    said = [m.get("content") for m in server.requests[0]["messages"] if m["role"] == "assistant"]
    assert said == ["The answer is 42.", "Still 42."]


def test_a_new_run_without_continue_starts_afresh(workspace: Path) -> None:
    with ModelServer([say("one")]) as server:
        deftly_run(server, workspace, "first")
    with ModelServer([say("two")]) as server:
        deftly_run(server, workspace, "second")
    assert [t.strip() for t in user_texts(server.requests[0])] == ["second"]


def test_an_ask_without_a_terminal_is_refused_and_the_model_is_told_how(workspace: Path) -> None:
    script = [calls(Call("Bash", {"command": "touch b.txt"})), say("I could not touch it.")]
    with ModelServer(script) as server:
        done = deftly_run(server, workspace, "touch b.txt")
    assert done.returncode == 0, done.stderr
    assert not (workspace / "b.txt").exists()
    assert "✗ Bash: touch b.txt — " in done.stderr
    refusal = server.requests[1]["messages"][-1]["content"]
    assert "--yes" in refusal and "Bash(touch b.txt)" in refusal
    with ModelServer(script) as server:
        allowed = deftly_run(server, workspace, "--yes", "touch b.txt")
    assert allowed.returncode == 0 and (workspace / "b.txt").exists()
    assert "✓ Bash: touch b.txt" in allowed.stderr


def test_the_anthropic_provider_runs_a_turn_too(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    script = [calls(Call("Read", {"path": "a.txt"})), say("It says hello.")]
    with ModelServer(script) as server:
        done = run_deftly(
            "run", "read a.txt", "-w", str(workspace), "--provider", "anthropic",
            "--base-url", server.anthropic_url, "--model", "scripted", ANTHROPIC_API_KEY="k",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says hello.\n"
    assert done.stderr.splitlines()[-1:] == ["✓ Read: a.txt"]
    assert server.paths == ["/v1/messages", "/v1/messages"]


def test_a_refusal_exits_1_with_the_reason(workspace: Path) -> None:
    refused = Reply((Say("I can't help with that."),), finish="content_filter")
    with ModelServer([refused]) as server:
        done = deftly_run(server, workspace, "--json", "do something bad")
    assert done.returncode == 1
    end = json_lines(done.stdout)[-1]
    assert end["stop_reason"] == "error" and "safety filter" in end["error"]
