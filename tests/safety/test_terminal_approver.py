"""The terminal approver, driven through a real pseudo-terminal with pexpect."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.conftest import subprocess_env, trust_folder

DEFTLY = str(Path(sys.executable).with_name("deftly"))
TIMEOUT = 60
PROMPT = r"Approve Write\? \[y/a/n/f\]"
CALL_PROMPT = r"Approve Write\? \[y/n/f\]"
"""One-shot `deftly call` offers no "yes for this session" it could not keep (issue 11)."""


@pytest.fixture
def tty_ws(workspace: Path) -> Path:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text('[tools]\nload = ["tests.helpers:WriteTool"]\n')
    # Existing files nothing can restore (no git, never read), so manual mode asks (issue
    # 10 §2: creating a new file would not).
    for name in ("notes.txt", "other.txt"):
        (workspace / name).write_text("old")
    trust_folder(workspace)  # trusted beforehand, so the first-run question is not asked
    return workspace


def spawn(*args: str) -> pexpect.spawn:
    env = subprocess_env(COLUMNS="160", LINES="50", NO_COLOR="1", TERM="dumb")
    child = pexpect.spawn(
        DEFTLY, list(args), env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 160)
    )
    return child


def finish(child: pexpect.spawn) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.before or "", child.exitstatus


def write_call(ws: Path, content: str = "hello tty") -> pexpect.spawn:
    args = json.dumps({"path": "notes.txt", "content": content})
    return spawn("call", "Write", args, "-w", str(ws))


def test_yes_runs_the_call_after_showing_it(tty_ws: Path) -> None:
    child = write_call(tty_ws)
    child.expect("Approve Write\\?")  # the panel title
    child.expect("hello tty")  # the display: what will be written
    child.expect(CALL_PROMPT)
    child.sendline("y")
    _, status = finish(child)
    assert status == 0
    assert (tty_ws / "notes.txt").read_text() == "hello tty"


def test_no_leaves_the_file_alone(tty_ws: Path) -> None:
    child = write_call(tty_ws)
    child.expect(CALL_PROMPT)
    child.sendline("n")
    rest, status = finish(child)
    assert status == 1 and (tty_ws / "notes.txt").read_text() == "old"
    assert "declined" in " ".join(rest.split())


def test_no_with_feedback_reaches_the_model(tty_ws: Path) -> None:
    child = write_call(tty_ws)
    child.expect(CALL_PROMPT)
    child.sendline("f")
    child.expect("What should the model do instead\\?")
    child.sendline("put it in docs/ instead")
    rest, status = finish(child)
    assert status == 1 and (tty_ws / "notes.txt").read_text() == "old"
    assert "put it in docs/ instead" in " ".join(rest.split())


def test_unclear_answers_are_asked_again_and_end_of_input_refuses(tty_ws: Path) -> None:
    child = write_call(tty_ws)
    child.expect(CALL_PROMPT)
    child.sendline("maybe")
    child.expect("Please answer one of y/n/f")
    child.expect(CALL_PROMPT)
    child.sendeof()
    rest, status = finish(child)
    assert status == 1 and (tty_ws / "notes.txt").read_text() == "old"
    assert "not approved" in rest


def test_yes_for_the_session_is_not_asked_again(tty_ws: Path, tmp_path: Path) -> None:
    line = {"name": "Write", "arguments": {"path": "notes.txt", "content": "same"}}
    other = {"name": "Write", "arguments": {"path": "other.txt", "content": "x"}}
    batch = tmp_path / "calls.jsonl"
    batch.write_text("\n".join(json.dumps(x) for x in (line, line, other)) + "\n")
    child = spawn("batch", str(batch), "-w", str(tty_ws), "--json")
    child.expect(PROMPT)
    child.sendline("a")
    child.expect(PROMPT)  # only the third call, to another file, is asked about
    child.sendline("n")
    rest, status = finish(child)
    full = (child.before or "") + rest
    assert status == 1, full
    assert (tty_ws / "notes.txt").read_text() == "same"
    assert (tty_ws / "other.txt").read_text() == "old"
    rows = [json.loads(x) for x in rest.splitlines() if x.startswith("{")]
    assert [r["is_error"] for r in rows] == [False, False, True]


DRIVER = """
import asyncio
from deftly.cli.approver import TerminalApprover
from deftly.contract.display import PlanOption, PlanReviewDisplay
from deftly.policy import ApprovalRequest

async def main():
    display = PlanReviewDisplay(
        plan="# Plan\\n1. do it", path="/tmp/plan.md",
        options=[PlanOption(label="Small", description="a"),
                 PlanOption(label="Big", description="b")],
    )
    request = ApprovalRequest("c1", "ExitPlanMode", "Approve this plan", {}, display,
                              "ExitPlanMode", "plan mode ends only when the user approves")
    response = await TerminalApprover().request(request)
    print("ANSWER", response.decision, response.selected)

asyncio.run(main())
"""


def test_a_plan_review_offers_the_approaches(tmp_path: Path) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = subprocess_env(COLUMNS="160", NO_COLOR="1", TERM="dumb")
    child = pexpect.spawn(sys.executable, [str(driver)], env=env, encoding="utf-8", timeout=TIMEOUT)
    child.expect("1. do it")
    child.expect("yes, with approach: Big")
    child.expect(r"Approve ExitPlanMode\? \[1/2/y/n/f\]")
    child.sendline("2")
    child.expect("ANSWER approve Big")
    finish(child)
