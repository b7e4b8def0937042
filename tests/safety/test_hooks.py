"""External command hooks: real shell commands that allow, block, fail and time out."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deftly import Outcome, Runtime
from deftly.contract import ConfigError
from deftly.execution import RuntimeNotice
from deftly.execution.external_hooks import HookOutcome
from deftly.policy import ApprovalRequest, ApprovalResponse
from tests.helpers import PeekTool, ScribbleTool

PY = shlex.quote(sys.executable)


def script(directory: Path, name: str, body: str) -> str:
    """A hook script file; returns the shell command that runs it."""
    path = directory / name
    path.write_text("import json, os, sys, time\n" + body)
    return f"{PY} {shlex.quote(str(path))}"


RECORD = """
payload = json.load(sys.stdin)
with open(os.environ["RECORD_TO"], "a") as out:
    out.write(json.dumps(payload) + "\\n")
"""


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    folder = tmp_path / "hooks"
    folder.mkdir()
    return folder


@pytest.fixture
def record_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "payloads.jsonl"
    monkeypatch.setenv("RECORD_TO", str(path))
    return path


def payloads(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


async def runtime(make_runtime: Any, hooks: dict[str, list[dict[str, Any]]], **kw: Any) -> Runtime:
    kw.setdefault("builtins", False)
    rt: Runtime = await make_runtime(tools=[PeekTool, ScribbleTool], config={"hooks": hooks}, **kw)
    return rt


def hook_notices(rt: Runtime) -> list[RuntimeNotice]:
    seen: list[RuntimeNotice] = []
    rt.subscribe(
        lambda e: seen.append(e) if isinstance(e, RuntimeNotice) and e.kind == "hook" else None
    )
    return seen


# -- allow -----------------------------------------------------------------------------------


async def test_a_hook_that_exits_0_allows_and_gets_the_call_as_json(
    make_runtime: Any, workspace: Path, scripts: Path, record_file: Path
) -> None:
    command = script(scripts, "record.py", RECORD)
    rt = await runtime(make_runtime, {"PreToolUse": [{"matcher": "Scribble", "command": command}]})
    result = await rt.call("Scribble", {"path": "a.txt", "content": "hi"}, call_id="c1")
    assert not result.is_error and (workspace / "a.txt").read_text() == "hi"
    [payload] = payloads(record_file)
    assert payload == {
        "event": "PreToolUse",
        "hook_event_name": "PreToolUse",
        "tool_name": "Scribble",
        "tool_input": {"path": "a.txt", "content": "hi"},
        "tool_call_id": "c1",
        "workspace": str(workspace),
        "cwd": str(workspace),
        "session_id": rt.session_id,
        "permission_mode": "manual",
    }


async def test_matchers_select_tools_by_whole_name(
    make_runtime: Any, scripts: Path, record_file: Path
) -> None:
    command = script(scripts, "record.py", RECORD)
    hooks = {
        "PreToolUse": [
            {"matcher": "Scrib", "command": command + " partial"},
            {"matcher": "Peek|Scribble", "command": command + " both"},
            {"matcher": "*", "command": command + " star"},
            {"command": command + " star"},
        ]
    }
    rt = await runtime(make_runtime, hooks)
    await rt.call("Peek", {"path": "x"})
    await rt.call("Scribble", {"path": "x", "content": ""})
    names = [p["tool_name"] for p in payloads(record_file)]
    assert sorted(names) == ["Peek", "Peek", "Scribble", "Scribble"], "Scrib is not Scribble"


# -- block -----------------------------------------------------------------------------------

BLOCKERS = {
    "exit-2": "sys.stderr.write('Blocked: writes go through review'); sys.exit(2)",
    "json-deny": (
        "print(json.dumps({'decision': 'deny', 'reason': 'Blocked: writes go through review'}))"
    ),
    "specific-output": (
        "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'deny', "
        "'permissionDecisionReason': 'Blocked: writes go through review'}}))"
    ),
}


@pytest.mark.parametrize("how", sorted(BLOCKERS))
async def test_a_hook_blocks_with_its_reason(
    make_runtime: Any, workspace: Path, scripts: Path, how: str
) -> None:
    approvals: list[ApprovalRequest] = []

    class Watching:
        async def request(self, request: ApprovalRequest) -> ApprovalResponse:
            approvals.append(request)
            return ApprovalResponse("approve")

    command = script(scripts, "block.py", "json.load(sys.stdin)\n" + BLOCKERS[how] + "\n")
    rt = await runtime(
        make_runtime,
        {"PreToolUse": [{"matcher": "Scribble", "command": command}]},
        approve_asks=False,
        approver=Watching(),
    )
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert result.is_error and result.outcome is Outcome.VETOED
    assert "blocked by a PreToolUse hook: Blocked: writes go through review" in result.text
    assert not (workspace / "a.txt").exists()
    assert approvals == [], "nobody is asked about a call a hook blocks"


async def test_a_denied_call_never_reaches_the_hooks(
    make_runtime: Any, scripts: Path, record_file: Path
) -> None:
    command = script(scripts, "record.py", RECORD)
    rt: Runtime = await make_runtime(
        builtins=False,
        tools=[ScribbleTool],
        config={
            "permissions": {"deny": ["Scribble"]},
            "hooks": {"PreToolUse": [{"command": command}]},
        },
    )
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert "denied by the permission rule" in result.text
    assert payloads(record_file) == []


# -- fail, time out --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            "sys.stderr.write('checker crashed'); sys.exit(1)",
            "failed with exit status 1: checker crashed",
        ),
        ("print('{not json')", "looks like JSON but is not"),
    ],
)
async def test_a_failing_hook_is_reported_and_does_not_block(
    make_runtime: Any, workspace: Path, scripts: Path, body: str, fragment: str
) -> None:
    command = script(scripts, "fail.py", body + "\n")
    rt = await runtime(make_runtime, {"PreToolUse": [{"command": command}]})
    notices = hook_notices(rt)
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert not result.is_error and (workspace / "a.txt").read_text() == "x"
    [notice] = notices
    assert fragment in notice.message and "the call went ahead" in notice.message
    assert isinstance(notice.data, HookOutcome) and notice.data.status == "failed"


async def test_a_command_that_cannot_run_is_reported(make_runtime: Any, workspace: Path) -> None:
    rt = await runtime(make_runtime, {"PreToolUse": [{"command": "deftly-no-such-program-xyz"}]})
    notices = hook_notices(rt)
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert not result.is_error
    assert notices and "exit status 127" in notices[0].message


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, only not reaped


def _wait_dead(pids: list[int], seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


SLOW = """
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.environ["PIDS_TO"], "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
time.sleep(120)
"""


async def test_a_hook_that_times_out_is_stopped_with_its_children(
    make_runtime: Any,
    workspace: Path,
    scripts: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("PIDS_TO", str(pids_file))
    command = script(scripts, "slow.py", SLOW)
    rt = await runtime(make_runtime, {"PreToolUse": [{"command": command, "timeout": 5}]})
    notices = hook_notices(rt)
    started = time.monotonic()
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert time.monotonic() - started < 60
    assert not result.is_error, "a timeout does not block"
    [notice] = notices
    assert "did not finish within 5s" in notice.message
    pids = [int(p) for p in pids_file.read_text().split()]
    assert _wait_dead(pids) == [], "no hook process outlives its timeout"


LINGER = """
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.environ["PIDS_TO"], "w") as out:
    out.write(str(child.pid))
sys.exit(0)
"""


async def test_processes_a_hook_leaves_behind_are_stopped(
    make_runtime: Any, scripts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("PIDS_TO", str(pids_file))
    command = script(scripts, "linger.py", LINGER)
    rt = await runtime(make_runtime, {"PreToolUse": [{"command": command, "timeout": 60}]})
    notices = hook_notices(rt)
    started = time.monotonic()
    result = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    assert not result.is_error and notices == [], "the hook itself succeeded"
    assert time.monotonic() - started < 50, "did not wait for the leftover child"
    assert _wait_dead([int(pids_file.read_text())]) == []


# -- PostToolUse -----------------------------------------------------------------------------


async def test_post_tool_use_gets_the_result_and_can_object(
    make_runtime: Any, workspace: Path, scripts: Path, record_file: Path
) -> None:
    record = script(scripts, "record.py", RECORD)
    objection = script(
        scripts,
        "object.py",
        "json.load(sys.stdin)\nsys.stderr.write('run the formatter')\nsys.exit(2)\n",
    )
    rt: Runtime = await make_runtime(
        builtins=False,
        tools=[PeekTool, ScribbleTool],
        config={
            "permissions": {"deny": ["Scribble(**/denied.txt)"]},
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Scribble", "command": record},
                    {"matcher": "Scribble", "command": objection},
                ]
            },
        },
    )
    ok = await rt.call("Scribble", {"path": "a.txt", "content": "x"})
    await rt.call("Scribble", {"path": "denied.txt", "content": "x"})
    assert not ok.is_error and (workspace / "a.txt").exists()
    assert ok.note is not None and "A PostToolUse hook objected: run the formatter" in ok.note
    [payload] = payloads(record_file)
    assert payload["event"] == "PostToolUse" and payload["tool_name"] == "Scribble"
    assert payload["tool_response"] == {
        "output": f"wrote 1 characters to {workspace}/a.txt",
        "is_error": False,
        "truncated": False,
    }


# -- configuration ---------------------------------------------------------------------------


def test_hooks_config_is_checked_at_load(workspace: Path) -> None:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text('[[hooks.PreToolUse]]\nmatcher = "Bash("\ncommand = "true"\n')
    with pytest.raises(ConfigError) as caught:
        Runtime(workspace)
    assert str(config) in str(caught.value) and "not a valid regular expression" in str(
        caught.value
    )
    config.write_text('[[hooks.PreToolUse]]\ncommand = "  "\n')
    with pytest.raises(ConfigError, match="command is empty"):
        Runtime(workspace)
    config.write_text('[[hooks.PreToolUse]]\ncommand = "true"\ntimeout = 0\n')
    with pytest.raises(ConfigError, match="timeout"):
        Runtime(workspace)


def test_user_and_project_hooks_are_concatenated(workspace: Path) -> None:
    from deftly.config import user_config_dir

    user = user_config_dir() / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[[hooks.PreToolUse]]\ncommand = "echo user"\n')
    project = workspace / ".deftly" / "config.toml"
    project.parent.mkdir()
    project.write_text(
        '[[hooks.PreToolUse]]\ncommand = "echo project"\n'
        '[[hooks.PostToolUse]]\ncommand = "echo post"\n'
    )
    hooks = Runtime(workspace, trust=True).config.hooks  # project hooks need trust
    assert [h.command for h in hooks.pre_tool_use] == ["echo user", "echo project"]
    assert [h.command for h in hooks.post_tool_use] == ["echo post"]
