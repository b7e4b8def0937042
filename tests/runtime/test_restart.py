"""`close()` then `start()` gives fresh, working services: Bash gets a new task manager (it
used to stay bound to the closed one and fail every command with "The runtime is
closing"), MCP servers start again, skills load again; the host's own tools and hooks stay.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly import Runtime
from deftly.execution.hooks import BeforeContext, Decision
from deftly.features.mcp.manager import McpManager
from deftly.features.shell.tasks import BackgroundTasks
from tests.helpers import EchoTool
from tests.mcp.conftest import alive, eventually, fake
from tests.skills.conftest import write_skill


@pytest.fixture
def user_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = isolated_home / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


async def test_bash_mcp_and_skills_work_again_after_a_restart(
    workspace: Path, tmp_path: Path, user_home: Path
) -> None:
    write_skill(user_home / ".agents" / "skills", "greet", body="Say hello.")
    pid_file = tmp_path / "pid"
    rt = Runtime(
        workspace,
        config={"mcp": {"servers": {"fake": fake("--pid-file", str(pid_file))}}},
        plugins=False,
        approve_asks=True,
    )
    seen: list[str] = []

    async def note(ctx: BeforeContext) -> Decision:
        seen.append(ctx.call.name)
        return None

    rt.before_hooks.add("host-note", note)
    rt.register_tool(EchoTool())
    try:
        await rt.start()
        first_tasks = rt.service(BackgroundTasks)
        assert (await rt.call("Bash", {"command": "echo one"})).text.strip() == "one"
        first_pid = int((await rt.call("mcp__fake__pid", {})).text)
        assert not (await rt.call("Skill", {"skill": "greet"})).is_error

        await rt.close()
        assert await eventually(lambda: not alive(first_pid))
        with pytest.raises(LookupError):
            rt.service(BackgroundTasks)  # nothing of the closed session is offered

        await rt.start()
        assert rt.service(BackgroundTasks) is not first_tasks
        bash = await rt.call("Bash", {"command": "echo two"})
        assert (bash.is_error, bash.text.strip()) == (False, "two")
        background = await rt.call("Bash", {"command": "echo three", "run_in_background": True})
        assert not background.is_error, background.text
        waited = await rt.call("WaitFor", {"timeout": 20})
        assert not waited.is_error, waited.text
        second_pid = int((await rt.call("mcp__fake__pid", {})).text)
        assert second_pid != first_pid and alive(second_pid)
        assert [s.state for s in rt.service(McpManager).statuses()] == ["connected"]
        skill = await rt.call("Skill", {"skill": "greet"})
        assert not skill.is_error and "Say hello." in skill.text
        # What the host added stays: its tool, and its hook (which saw every call).
        assert (await rt.call("Echo", {"text": "still here"})).text == "still here"
        assert seen.count("Bash") == 3 and "Echo" in seen
    finally:
        await rt.close()
    assert not alive(second_pid)


async def test_each_restart_has_one_copy_of_each_hook_and_guard(workspace: Path) -> None:
    rt = Runtime(workspace, plugins=False, approve_asks=True)
    await rt.start()
    hooks = len(rt.before_hooks)
    guards = len(rt.agent.executor.guards)
    tools = rt.registry.names()
    for _ in range(2):
        await rt.close()
        await rt.start()
    try:
        assert (len(rt.before_hooks), len(rt.agent.executor.guards)) == (hooks, guards)
        assert rt.registry.names() == tools
    finally:
        await rt.close()
    # Closed: the features' tools are gone from the registry (they would be bound to
    # closed services); a start brings them back.
    assert "Bash" not in rt.registry


async def test_session_approvals_and_the_mode_outlive_a_restart(workspace: Path) -> None:
    rt = Runtime(workspace, plugins=False, mode="yolo")
    await rt.start()
    rt.permissions.session.add("Bash(make *)")
    await rt.close()
    await rt.start()
    try:
        assert rt.mode == "yolo"
        assert "Bash(make *)" in rt.permissions.session.rules
    finally:
        await rt.close()
