"""A runtime on a rooted env: the tools, Bash (with and without the default sandbox nested
inside the view), search and spilled output all in the view, and no link out of it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.env.rooted import RootedEnv
from tests.shell.conftest import (
    eventually,
    exec_started,
    new_marker,
    processes_with,
    task_id_in,
)

SECRET = "host-secret-3f9a"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A workspace (`ws`) with links planted to a host file beside it that no mount shows."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (ws / "notes.txt").write_text("one\ntwo\n")
    os.symlink(outside / "secret.txt", ws / "abs-file")
    os.symlink(outside, ws / "abs-dir")
    os.symlink("../outside/secret.txt", ws / "up-file")
    return tmp_path


@pytest.fixture
def env(host: Path) -> Iterator[RootedEnv]:
    rooted = RootedEnv({"/workspace": host / "ws"})
    yield rooted
    rooted.close()


def runtime(env: RootedEnv, **shell: Any) -> Runtime:
    config: dict[str, Any] = {"shell": shell} if shell else {}
    return Runtime("/workspace", env=env, config=config, plugins=False, approve_asks=True)


async def test_the_tools_work_in_the_view_and_no_link_leads_out(host: Path, env: RootedEnv) -> None:
    async with runtime(env, sandbox="none") as rt:
        assert rt.workspace_path == Path("/workspace")
        read = await rt.call("Read", {"path": "notes.txt"})
        assert not read.is_error and read.text.splitlines() == ["1\tone", "2\ttwo"]
        bash = await rt.call("Bash", {"command": "pwd && cat notes.txt && cat up-file"})
        assert bash.text.splitlines()[:2] == ["/workspace", "one"] and SECRET not in bash.text
        grep = await rt.call("Grep", {"pattern": "two", "output_mode": "content"})
        assert "notes.txt" in grep.text and str(host / "ws") not in grep.text
        glob = await rt.call("Glob", {"pattern": "*.txt"})
        assert "notes.txt" in glob.text and str(host / "ws") not in glob.text
        for path in ("abs-file", "up-file", "abs-dir/secret.txt", "/workspace/abs-file"):
            escaped = await rt.call("Read", {"path": path})
            assert escaped.is_error and SECRET not in escaped.text, path
            # A link's text may name a host path (it is just a path in the view); the
            # real folder behind /workspace is never named.
            assert str(host / "ws") not in escaped.text, escaped.text
        wrote = await rt.call("Write", {"path": "abs-dir/planted.txt", "content": "x"})
        assert wrote.is_error and not (host / "outside" / "planted.txt").exists()
        found = await rt.call("Grep", {"pattern": "secret-3f9a", "path": "/workspace"})
        assert found.text.startswith("No matches") and SECRET not in found.text
        edit = await rt.call(
            "Edit", {"path": "notes.txt", "old_string": "two", "new_string": "three"}
        )
        assert not edit.is_error and (host / "ws" / "notes.txt").read_text() == "one\nthree\n"


async def test_spilled_output_is_paged_with_read_in_the_view(env: RootedEnv) -> None:
    async with runtime(env, sandbox="none") as rt:
        result = await rt.call("Bash", {"command": "seq 1 40000"})
        spilled = [w for w in result.text.split() if w.startswith("/") and "spill" in w]
        logs = [line.split(": ", 1)[1] for line in result.text.splitlines() if "log_path: " in line]
        paths = spilled or logs
        assert paths, result.text[-800:]
        page = await rt.call("Read", {"path": paths[0].rstrip(".,)"), "line_offset": 39999})
        assert not page.is_error and "40000" in page.text, page.text
        assert not paths[0].startswith(str(os.environ.get("DEFTLY_HOME", "/nowhere")))


async def test_the_default_sandbox_nests_inside_the_view(host: Path, env: RootedEnv) -> None:
    (host / "ws" / ".env").write_text("API_KEY=hunter2\n")
    async with runtime(env) as rt:
        bash = await rt.call("Bash", {"command": "pwd; cat .env; echo done"})
        assert not bash.is_error, bash.text
        assert bash.text.splitlines()[0] == "/workspace" and "done" in bash.text
        assert "hunter2" not in bash.text  # the secret is masked inside the nested sandbox


@pytest.mark.parametrize("sandbox", ["none", "auto"])
async def test_a_stopped_task_gets_sigterm_and_its_grace_in_the_view(
    env: RootedEnv, sandbox: str
) -> None:
    # The view's bubblewrap leads the session and ignores SIGTERM, and the sandbox's own
    # bubblewrap inside is not signalled: the command's trap runs before anything is killed.
    marker = new_marker()
    command = (
        f"trap 'sleep 0.3; echo term-$((40 + 2)); exit 3' TERM; exec -a {marker} sleep 1000 & wait"
    )
    async with runtime(env, sandbox=sandbox, kill_grace=5.0) as rt:
        started = await rt.call("Bash", {"command": command, "run_in_background": True})
        assert await eventually(lambda: exec_started(marker))
        stopped = await rt.call("TaskStop", {"task_id": task_id_in(started.text)})
        assert "term-42" in stopped.text, stopped.text
        assert await eventually(lambda: not processes_with(marker))
