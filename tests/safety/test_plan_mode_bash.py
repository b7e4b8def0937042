"""Issue 10, plan mode: a shell command that is not proven read-only asks (in yolo too) and
is refused in auto mode; read-only commands run as before. Real Bash, real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import Outcome, Runtime
from deftly.features.shell.readonly import not_read_only
from deftly.features.shell.rules import split_command
from deftly.policy import ApprovalRequest, ApprovalResponse

SHELL = {"shell": {"sandbox": "none"}}

READ_ONLY = [
    "ls",
    "ls -la src",
    "cat a.txt",
    "grep -r x .",
    "git status",
    "git diff",
    "git log --oneline -3",
    "rg -n x",
    "find . -name '*.txt'",
    "head -3 a.txt",
    "tail -n 2 a.txt",
    "wc -l a.txt",
    "pwd",
    "echo hello",
    "cat a.txt | grep x | wc -l",
    "ls 2>/dev/null",
    "sed -n 1,2p a.txt",
    "git branch",
    "sort < a.txt",
]
CHANGING = [
    "echo x > f",
    "echo x >> a.txt",
    "cat a.txt | tee f",
    "rm a.txt",
    "touch f",
    "sed -i s/x/y/ a.txt",
    "find . -delete",
    "find . -exec rm {} +",
    "git branch -D main",
    "git -c core.pager=rm log",
    "git commit -m x",
    "sort -o f a.txt",
    "rg --pre sh x",
    'python3 -c \'open("f", "w")\'',
    "X=rm; $X a.txt",
    "bash s.sh",
    "echo $(touch f)",
    "ls && mkdir d",
    "cp a.txt f",
    "sed 's/x/y/w f' a.txt",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_proven(command: str) -> None:
    assert not_read_only(split_command(command)) is None


@pytest.mark.parametrize("command", CHANGING)
def test_changing_commands_are_not(command: str) -> None:
    assert not_read_only(split_command(command)) is not None


SEPARATORS = [" | ", " && ", " || ", "; ", "\n"]


def compound(parts: list[str], separators: list[str]) -> str:
    text = parts[0]
    for part, separator in zip(parts[1:], separators, strict=False):
        text += separator + part
    return text


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.sampled_from(READ_ONLY), min_size=1, max_size=5),
    separators=st.lists(st.sampled_from(SEPARATORS), min_size=4, max_size=4),
    bad=st.sampled_from(CHANGING),
    where=st.integers(min_value=0, max_value=5),
    data=st.data(),
)
def test_one_changing_part_spoils_any_compound(
    parts: list[str], separators: list[str], bad: str, where: int, data: st.DataObject
) -> None:
    assert not_read_only(split_command(compound(parts, separators))) is None
    spoiled = [*parts]
    spoiled.insert(min(where, len(spoiled)), bad)
    joints = data.draw(st.lists(st.sampled_from(SEPARATORS), min_size=5, max_size=5))
    assert not_read_only(split_command(compound(spoiled, joints))) is not None


class Approver:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        return ApprovalResponse(self.answers.pop(0))  # type: ignore[arg-type]


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("x\n")
    return workspace


async def planning(ws: Path, mode: str, **kwargs: object) -> Runtime:
    rt = Runtime(ws, config=SHELL, plugins=False, mode=mode, **kwargs)  # type: ignore[arg-type]
    await rt.start()
    entered = await rt.call("EnterPlanMode", {})
    assert not entered.is_error, entered.text
    return rt


@pytest.mark.parametrize("mode", ["manual", "yolo"])
async def test_a_redirection_asks_in_plan_mode_and_no_one_can_be_asked(ws: Path, mode: str) -> None:
    rt = await planning(ws, mode)
    try:
        result = await rt.call("Bash", {"command": "echo x > f"})
    finally:
        await rt.close()
    assert result.outcome is Outcome.VETOED, result.text
    assert "Plan mode is on" in result.text and "it writes" in result.text
    assert not (ws / "f").exists()


async def test_auto_mode_refuses_with_the_plan_message(ws: Path) -> None:
    rt = await planning(ws, "auto")
    try:
        result = await rt.call("Bash", {"command": "echo x > f"})
        ls = await rt.call("Bash", {"command": "ls"})
    finally:
        await rt.close()
    assert result.outcome is Outcome.VETOED
    assert "Plan mode is on" in result.text and "ExitPlanMode" in result.text
    assert not (ws / "f").exists()
    assert not ls.is_error and "a.txt" in ls.text


async def test_yolo_asks_once_and_runs_when_approved(ws: Path) -> None:
    approver = Approver("approve")
    rt = await planning(ws, "yolo", approver=approver)
    try:
        result = await rt.call("Bash", {"command": "echo x > f"})
    finally:
        await rt.close()
    assert not result.is_error, result.text
    assert (ws / "f").read_text() == "x\n"
    assert len(approver.requests) == 1  # the gate did not ask a second time
    assert "plan mode is on" in approver.requests[0].reason


async def test_a_declined_command_does_not_run(ws: Path) -> None:
    approver = Approver("reject")
    rt = await planning(ws, "yolo", approver=approver)
    try:
        result = await rt.call("Bash", {"command": "rm a.txt"})
    finally:
        await rt.close()
    assert result.outcome is Outcome.VETOED and (ws / "a.txt").exists()


async def test_read_only_commands_run_as_before(ws: Path) -> None:
    approver = Approver()
    rt = await planning(ws, "yolo", approver=approver)
    try:
        result = await rt.call("Bash", {"command": "cat a.txt | wc -l"})
    finally:
        await rt.close()
    assert not result.is_error and "1" in result.text
    assert approver.requests == []


async def test_outside_plan_mode_nothing_changes(ws: Path) -> None:
    async with Runtime(ws, config=SHELL, plugins=False, mode="yolo") as rt:
        result = await rt.call("Bash", {"command": "echo x > f"})
    assert not result.is_error and (ws / "f").read_text() == "x\n"
