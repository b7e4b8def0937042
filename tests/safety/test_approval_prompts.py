"""Approval prompts people can trust: the real diff of the file on disk, the command with
its description, the rule a session approval remembers chosen by the person, no session
choice where it cannot be kept, and a command's output shown live at a terminal.

Terminal cases run the real `deftly` at a real pseudo-terminal (pexpect); library cases a
real runtime with an approver that records what it was shown; MCP cases the real SDK client
over a real stdio pipe.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mcp.types as mt
import pexpect
from mcp import Client, StdioServerParameters

from deftly import Runtime
from deftly.contract.display import DiffDisplay, unified_diff
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))
TIMEOUT = 60
THIRTY = "".join(f"line {n}\n" for n in range(1, 31))
EDIT = {"path": "f.txt", "old_string": "line 13\n", "new_string": "LINE THIRTEEN\n"}
HUNK = "@@ -10,7 +10,7 @@"


def spawn(*args: str) -> pexpect.spawn:
    env = subprocess_env(COLUMNS="200", LINES="60", NO_COLOR="1", TERM="dumb")
    return pexpect.spawn(
        DEFTLY, list(args), env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(60, 200)
    )


def finish(child: pexpect.spawn) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.before or "", child.exitstatus


class Recorder:
    """An approver that remembers what it was shown and gives set answers."""

    def __init__(self, *answers: ApprovalResponse) -> None:
        self.answers = list(answers) or [ApprovalResponse("approve")]
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_the_exact_case_a_change_on_line_13_of_30(tmp_path: Path) -> None:
    text = unified_diff("f.txt", THIRTY, THIRTY.replace("line 13\n", "LINE THIRTEEN\n"))
    lines = text.splitlines()
    assert lines[:3] == ["--- a/f.txt", "+++ b/f.txt", HUNK]
    assert lines[3:6] == [" line 10", " line 11", " line 12"]
    assert lines[6:8] == ["-line 13", "+LINE THIRTEEN"]
    assert lines[8:] == [" line 14", " line 15", " line 16"]


def test_a_huge_change_says_how_big_it_is() -> None:
    before = "".join(f"{n}\n" for n in range(5_000))
    after = "".join(f"x{n}\n" for n in range(5_000))
    text = unified_diff("big.txt", before, after)
    assert "(diff too large: 10,000 lines changed)" in text
    assert len(text) < 200


def test_the_terminal_shows_the_real_diff_with_a_relative_path(workspace: Path) -> None:
    (workspace / "f.txt").write_text(THIRTY)
    child = spawn("call", "Edit", json.dumps(EDIT), "-w", str(workspace))
    child.expect("Approve Edit")
    child.expect(r"--- a/f\.txt")
    child.expect(r"\+\+\+ b/f\.txt")
    child.expect(HUNK.replace("+", r"\+"))
    child.expect(" line 12")
    child.expect("-line 13")
    child.expect(r"\+LINE THIRTEEN")
    child.expect(" line 14")
    shown = child.before or ""
    child.expect(r"Approve Edit\? \[y/n/f\]")  # one-shot: no "for this session"
    assert f"a/{workspace}".lstrip("/") not in shown and str(workspace / "f.txt") not in shown
    child.sendline("y")
    _, status = finish(child)
    assert status == 0
    assert (workspace / "f.txt").read_text() == THIRTY.replace("line 13\n", "LINE THIRTEEN\n")


async def test_write_shows_the_diff_against_the_file_or_says_it_is_new(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "f.txt").write_text(THIRTY)
    recorder = Recorder()
    rt: Runtime = await make_runtime(
        approve_asks=False,
        approver=recorder,
        config={"permissions": {"ask": ["Write(new/**)"]}},
    )
    changed = THIRTY.replace("line 20\n", "line twenty\n")
    assert not (await rt.call("Write", {"path": "f.txt", "content": changed})).is_error
    assert not (await rt.call("Write", {"path": "new/n.txt", "content": "a\nb\n"})).is_error
    over, new = (r.display for r in recorder.requests)
    assert isinstance(over, DiffDisplay) and over.path == "f.txt" and not over.new_file
    assert "@@ -17,7 +17,7 @@" in unified_diff(over.path, over.before, over.after)
    assert isinstance(new, DiffDisplay) and new.new_file and new.path == "new/n.txt"
    assert unified_diff(new.path, new.before, new.after, new_file=True).startswith(
        "--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    )


async def test_the_diff_is_worked_out_only_when_a_person_is_asked(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / "f.txt").write_text(THIRTY)
    rt: Runtime = await make_runtime(approve_asks=True)
    entry = rt.registry.get("Edit")
    assert entry is not None
    execution = entry.tool.resolve(entry.tool.parse_args(EDIT))
    assert execution.preview is not None  # lazy: resolve read nothing
    (workspace / "f.txt").unlink()
    assert execution.preview() is None  # the file is gone: the plain display stays


def test_bash_prompts_show_the_description(workspace: Path) -> None:
    (workspace / "x").write_text("old")
    command = {"command": "rm x", "description": "remove the stale marker"}
    child = spawn("call", "Bash", json.dumps(command), "-w", str(workspace))
    child.expect("remove the stale marker")
    child.expect("rm x")
    child.expect(r"Approve Bash\? \[y/n/f\]")
    child.sendline("n")
    _, status = finish(child)
    assert status == 1 and (workspace / "x").exists()


def test_yes_for_the_session_offers_a_prefix_rule(workspace: Path, tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (workspace / name).write_text("x")
    calls = [
        {"id": "1", "name": "Bash", "arguments": {"command": "rm -f a"}},
        {"id": "2", "name": "Bash", "arguments": {"command": "rm -f b"}},  # the prefix covers it
        {"id": "3", "name": "Bash", "arguments": {"command": "mv c d"}},  # asked again
    ]
    batch = tmp_path / "calls.jsonl"
    batch.write_text("".join(json.dumps(c) + "\n" for c in calls))
    child = spawn("batch", str(batch), "-w", str(workspace), "--json")
    child.expect(r"a\s+yes, and allow Bash\(rm -f a\) for the rest of this session")
    child.expect(r"p\s+yes, and allow Bash\(rm \*\) for the rest of this session")
    child.expect(r"Approve Bash\? \[y/a/p/n/f\]")
    child.sendline("p")
    child.expect(r"mv c d")
    child.expect(r"Approve Bash\? \[y/a/p/n/f\]")
    child.sendline("n")
    rest, status = finish(child)
    rows = [json.loads(x) for x in rest.splitlines() if x.startswith("{")]
    assert status == 1 and [r["is_error"] for r in rows] == [False, False, True], rest
    assert not (workspace / "a").exists() and not (workspace / "b").exists()
    assert (workspace / "c").exists()


async def test_the_prefix_is_the_command_word_and_its_subcommand(make_runtime: Any) -> None:
    recorder = Recorder(ApprovalResponse("approve_session", rule="Bash(git commit *)"))
    rt: Runtime = await make_runtime(approve_asks=False, approver=recorder)
    await rt.call("Bash", {"command": 'git commit -m "x"'})
    [request] = recorder.requests
    assert request.session_choices == ('Bash(git commit -m "x")', "Bash(git commit *)")
    later = await rt.explain("Bash", {"command": "git commit --amend"})
    assert later.verdict.value == "approve" and "Bash(git commit *)" in later.reason
    other = await rt.explain("Bash", {"command": "git push"})
    assert other.verdict.value == "ask"


def test_bash_output_streams_live_at_a_terminal(workspace: Path) -> None:
    gate = workspace / "go"
    command = f"echo first-line; until [ -e {gate} ]; do sleep 0.05; done; echo second-line"
    child = spawn("call", "Bash", json.dumps({"command": command}), "-w", str(workspace), "--yes")
    child.expect("first-line")  # seen while the command still waits for `go`
    assert "second-line" not in (child.before or "")
    gate.write_text("")
    child.expect("second-line")
    _, status = finish(child)
    assert status == 0


async def test_mcp_elicitation_shows_the_same_diff_and_the_description(workspace: Path) -> None:
    (workspace / "f.txt").write_text(THIRTY)
    (workspace / "x").write_text("old")
    questions: list[str] = []
    schemas: list[dict[str, Any]] = []

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        questions.append(params.message)
        schemas.append(params.requested_schema)
        decision = "approve" if len(questions) == 1 else "approve_rule_1"
        return mt.ElicitResult(action="accept", content={"decision": decision})

    params = StdioServerParameters(
        command=DEFTLY,
        args=["serve", "-w", str(workspace), "--mode", "manual"],
        env=subprocess_env(),
    )
    async with Client(params, mode="legacy", elicitation_callback=elicit) as client:
        assert not (await client.call_tool("Edit", EDIT)).is_error
        bash = {"command": "rm -f x", "description": "remove the stale marker"}
        assert not (await client.call_tool("Bash", bash)).is_error
        (workspace / "y").write_text("")
        again = await client.call_tool("Bash", {"command": "rm -f y"})  # Bash(rm *) chosen
        assert not again.is_error
    edit_question, bash_question = questions
    assert HUNK in edit_question and "--- a/f.txt" in edit_question
    assert " line 12\n-line 13\n+LINE THIRTEEN\n line 14" in edit_question
    assert "remove the stale marker" in bash_question and "$ rm -f x" in bash_question
    offered = [o["const"] for o in schemas[1]["properties"]["decision"]["oneOf"]]
    assert offered == ["approve", "approve_session", "approve_rule_1", "reject"]
