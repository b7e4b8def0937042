"""The permission gate in a real runtime: refusals, approvals, session memory, config rules."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Outcome, Runtime
from deftly.contract import ConfigError, DeftlyError
from deftly.contract.display import FileIODisplay, GenericDisplay
from deftly.execution import Allow, BeforeContext, RuntimeNotice
from deftly.execution.permission_gate import PermissionRecord
from deftly.policy import ApprovalRequest, ApprovalResponse, Link, Verdict
from tests.helpers import EchoTool, NamedTool, PeekTool, ScribbleTool, WriteTool

TOOLS = [PeekTool, ScribbleTool, WriteTool, EchoTool]


class ScriptedApprover:
    """An in-process approver (a real implementation of the protocol, standing in for a
    person): answers from a script and keeps every request it was shown."""

    def __init__(self, *answers: ApprovalResponse | BaseException) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


class SilentApprover:
    """Never answers (a person who walked away), so only cancellation ends the wait."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.cancelled = False

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        self.asked.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ApprovalResponse("approve")


@pytest.fixture
def ws(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


async def runtime(make_runtime: Any, **kwargs: Any) -> Runtime:
    kwargs.setdefault("approve_asks", False)
    kwargs.setdefault("builtins", False)
    kwargs.setdefault("tools", TOOLS)
    rt: Runtime = await make_runtime(**kwargs)
    return rt


def records(rt: Runtime) -> list[PermissionRecord]:
    found: list[PermissionRecord] = []
    rt.subscribe(
        lambda e: (
            found.append(e.data)
            if isinstance(e, RuntimeNotice) and isinstance(e.data, PermissionRecord)
            else None
        )
    )
    return found


# -- nobody to ask ---------------------------------------------------------------------------


async def test_nobody_to_ask_refuses_and_says_how_to_allow(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert result.is_error and result.outcome is Outcome.VETOED
    assert not (ws / "a.txt").exists()
    text = result.text
    assert "needs approval" in text and "--yes" in text and "approve_asks=True" in text
    assert "--mode yolo" in text and "rt.set_mode" in text
    assert f"allow = ['Scribble({ws}/a.txt)']" in text


async def test_the_refusal_fits_the_reason(make_runtime: Any, ws: Path) -> None:
    config = {"permissions": {"ask": ["Say(loud)"]}}
    rt = await runtime(make_runtime, config=config)
    rt.register_tool(NamedTool("Say", read_only=True, subject="text"))
    quiet = await rt.call("Say", {"text": "quiet"})
    asked = await rt.call("Say", {"text": "loud"})
    assert not quiet.is_error
    assert "remove the ask rule" in asked.text and "Say(loud)" in asked.text
    assert "--mode auto" in asked.text and "allow = [" not in asked.text
    rt.set_mode("yolo")
    secret = await rt.call("Scribble", {"path": ".git/info/exclude", "content": "x"})
    assert "--mode auto" in secret.text and "--mode yolo" not in secret.text
    assert "allow = [" in secret.text


async def test_approve_asks_approves_asks_and_never_a_deny(make_runtime: Any, ws: Path) -> None:
    config = {"permissions": {"deny": ["Scribble(**/blocked.txt)"]}}
    rt = await runtime(make_runtime, approve_asks=True, config=config)
    ok = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    denied = await rt.call("Scribble", {"path": "sub/blocked.txt", "content": "x"})
    assert not ok.is_error and (ws / "a.txt").read_text() == "x"
    assert denied.is_error and "denied by the permission rule" in denied.text
    assert "Scribble(**/blocked.txt)" in denied.text
    assert not (ws / "sub/blocked.txt").exists()


# -- asking a person -------------------------------------------------------------------------


async def test_the_request_carries_what_a_person_needs(make_runtime: Any, ws: Path) -> None:
    approver = ScriptedApprover(ApprovalResponse("approve"), ApprovalResponse("approve"))
    rt = await runtime(make_runtime, approver=approver)
    rt.register_tool(NamedTool("Deploy"))
    await rt.call("Scribble", {"path": "a.txt", "content": "hello"})
    await rt.call("Deploy", {"text": "prod"})
    write, deploy = approver.requests
    assert write.tool == "Scribble" and write.action == "Writing a.txt"
    assert isinstance(write.display, FileIODisplay) and write.display.content == "hello"
    assert write.approval_rule == f"Scribble({ws}/a.txt)"
    assert "not read-only" in write.reason
    assert write.args == {"path": "a.txt", "content": "hello"}
    assert isinstance(deploy.display, GenericDisplay)
    assert deploy.display.detail == {"text": "prod", "times": 1}


async def test_approve_once_then_ask_again(make_runtime: Any, ws: Path) -> None:
    approver = ScriptedApprover(ApprovalResponse("approve"), ApprovalResponse("approve"))
    rt = await runtime(make_runtime, approver=approver)
    for _ in range(2):
        result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
        assert not result.is_error
    assert len(approver.requests) == 2 and rt.permissions.session.rules == []


async def test_approve_for_the_session_remembers_the_approval_rule(
    make_runtime: Any, ws: Path
) -> None:
    approver = ScriptedApprover(ApprovalResponse("approve_session"), ApprovalResponse("reject"))
    rt = await runtime(make_runtime, approver=approver)
    seen = records(rt)
    first, again = await rt.run_batch(
        [
            {"name": "Scribble", "arguments": {"path": "a.txt", "content": "1"}},
            {"name": "Scribble", "arguments": {"path": "a.txt", "content": "2"}},
        ]
    )
    other = await rt.call("Scribble", {"path": "b.txt", "content": "x"})
    assert not first.is_error and not again.is_error, "the same call in the same batch"
    assert (ws / "a.txt").read_text() == "2"
    assert rt.permissions.session.rules == [f"Scribble({ws}/a.txt)"]
    assert other.is_error and len(approver.requests) == 2
    assert seen[0].resolution.startswith("asked: approved for this session")
    assert seen[1].decision.link is Link.SESSION_APPROVALS


async def test_a_rejection_reaches_the_model_with_the_feedback(make_runtime: Any, ws: Path) -> None:
    approver = ScriptedApprover(
        ApprovalResponse("reject", feedback="use the docs/ folder instead"),
        ApprovalResponse("reject"),
    )
    rt = await runtime(make_runtime, approver=approver)
    with_feedback = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    plain = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert with_feedback.is_error and with_feedback.outcome is Outcome.VETOED
    assert 'The user declined to run "Scribble" (Writing a.txt)' in with_feedback.text
    assert "use the docs/ folder instead" in with_feedback.text
    assert "declined" in plain.text and "Do not retry" in plain.text
    assert not (ws / "a.txt").exists()


async def test_a_failing_approver_refuses_without_crashing(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime, approver=ScriptedApprover(RuntimeError("dialog crashed")))
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert result.is_error and "asking for approval failed" in result.text
    assert "dialog crashed" in result.text and not (ws / "a.txt").exists()


async def test_cancelling_while_asking_stops_the_question(make_runtime: Any, ws: Path) -> None:
    from deftly.contract import CancelToken

    approver = SilentApprover()
    rt = await runtime(make_runtime, approver=approver)
    token = CancelToken()
    call = asyncio.ensure_future(
        rt.call("Scribble", {"path": "a.txt", "content": "x"}, cancel=token)
    )
    await asyncio.wait_for(approver.asked.wait(), timeout=30)
    token.cancel("stop", by_user=True)
    result = await asyncio.wait_for(call, timeout=30)
    assert result.is_error and "interrupted" in result.text
    assert approver.cancelled and not (ws / "a.txt").exists()


async def test_rt_approver_and_approve_asks_can_change(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    assert (await rt.call("Scribble", {"path": "a.txt", "content": "x"})).is_error
    rt.approver = ScriptedApprover(ApprovalResponse("approve"))
    assert not (await rt.call("Scribble", {"path": "a.txt", "content": "x"})).is_error
    rt.approver = None
    rt.approve_asks = True
    assert not (await rt.call("Scribble", {"path": "b.txt", "content": "x"})).is_error


# -- order against other hooks ---------------------------------------------------------------


async def test_deny_comes_before_every_other_hook_and_cannot_be_overridden(
    make_runtime: Any, ws: Path
) -> None:
    config = {"permissions": {"deny": ["Scribble"]}}
    rt = await runtime(make_runtime, config=config)
    seen: list[str] = []

    async def allow_everything(ctx: BeforeContext) -> Allow:
        seen.append(ctx.call.name)
        return Allow()

    rt.before_hooks.add("host", allow_everything)
    denied = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    outside = ws.parent / "x.txt"
    asked = await rt.call("Write", {"path": str(outside), "content": "x"})
    assert denied.is_error and seen == ["Write"], "the host hook never saw the denied call"
    assert not asked.is_error, "a host hook's Allow skips the question (documented)"
    assert outside.read_text() == "x"


async def test_explain_is_a_dry_run(make_runtime: Any, ws: Path) -> None:
    approver = ScriptedApprover()
    rt = await runtime(make_runtime, approver=approver)
    decision = await rt.explain("Scribble", {"path": "a.txt", "content": "x"})
    assert decision.verdict is Verdict.ASK and decision.link is Link.FALLBACK
    assert approver.requests == [] and not (ws / "a.txt").exists()
    write = await rt.explain("Write", '{"path": "a.txt", "content": "x"}')
    assert write.link is Link.RESTORABLE_WRITE
    with pytest.raises(DeftlyError, match="outside the workspace"):
        await rt.explain("Scribble", {"path": "../x", "content": "x"})
    with pytest.raises(DeftlyError, match="no active tool"):
        await rt.explain("Nope", {})


async def test_every_decision_is_announced(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    seen = records(rt)
    await rt.call("Peek", {"path": "x"})
    await rt.call("Scribble", {"path": "x", "content": "x"})
    assert [(r.decision.verdict, r.decision.link) for r in seen] == [
        (Verdict.APPROVE, Link.READ_ONLY),
        (Verdict.ASK, Link.FALLBACK),
    ]
    assert seen[1].resolution == "asked: refused: nobody can be asked (non-interactive)"
    assert "fallback" in seen[1].explain() and seen[1].to_json()["call_id"] == "call_2"


async def test_mode_changes_at_runtime(make_runtime: Any, ws: Path) -> None:
    rt = await runtime(make_runtime)
    notices: list[str] = []
    rt.subscribe(
        lambda e: (
            notices.append(e.message)
            if isinstance(e, RuntimeNotice) and e.kind == "permission_mode"
            else None
        )
    )
    assert rt.mode == "manual"
    assert (await rt.call("Scribble", {"path": "a.txt", "content": "x"})).is_error
    rt.set_mode("yolo")
    assert not (await rt.call("Scribble", {"path": "a.txt", "content": "x"})).is_error
    assert notices == ["permission mode: manual -> yolo"]
    with pytest.raises(ConfigError):
        rt.set_mode("reckless")


# -- rules from config files -----------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ("Bash(rm *", 'missing its closing ")"'),
        ("(x)", 'no tool name before "("'),
        ("Bash git status", 'put them in parentheses: "Bash(git status)"'),
        ("Bash)", 'has a ")" without a matching "("'),
        ("", "cannot be empty"),
    ],
)
def test_a_malformed_rule_is_an_error_naming_file_and_line(
    workspace: Path, rule: str, fragment: str
) -> None:
    config = write(
        workspace / ".deftly" / "config.toml",
        f'[permissions]\nallow = ["Read"]\n\ndeny = [\n  "Bash(ls)",\n  "{rule}",\n]\n',
    )
    with pytest.raises(ConfigError) as caught:
        Runtime(workspace)
    message = str(caught.value)
    assert f"{config}:6" in message and fragment in message and "deny rule" in message


def test_rules_from_user_and_project_files_are_all_loaded(workspace: Path) -> None:
    from deftly.config import user_config_dir

    user = write(user_config_dir() / "config.toml", '[permissions]\ndeny = ["Bash(rm *)"]\n')
    project = write(
        workspace / ".deftly" / "config.toml",
        '[permissions]\nmode = "yolo"\nask = [\'Bash(curl *)\']\nallow = ["Bash(rm \\\\*)"]\n',
    )
    rt = Runtime(workspace, trust=True)  # the project's mode and allow rule need trust
    assert rt.mode == "yolo"
    entries = [(str(e.kind), e.text, e.origin) for e in rt.permissions.rules]
    assert entries == [
        ("deny", "Bash(rm *)", f"{user}:2"),
        ("ask", "Bash(curl *)", f"{project}:3"),
        ("allow", "Bash(rm \\*)", f"{project}:4"),
    ]


def test_mode_argument_wins_and_is_checked(workspace: Path) -> None:
    write(workspace / ".deftly" / "config.toml", '[permissions]\nmode = "auto"\n')
    assert Runtime(workspace, mode="manual").mode == "manual"
    with pytest.raises(ConfigError, match="unknown permission mode"):
        Runtime(workspace, mode="reckless")
