"""The optional bubblewrap sandbox: refused when missing, confining when present."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.features.shell.launch import bundled_bwrap
from tests.shell.conftest import eventually, marked_sleep, new_marker, processes_with, task_id_in


def _bwrap_works() -> str | None:
    """None when bubblewrap can make a sandbox here, else why not."""
    program = shutil.which("bwrap") or bundled_bwrap()
    if program is None:
        return "bubblewrap (bwrap) is not installed; the sandboxed path cannot be tested here"
    probe = subprocess.run(
        [
            program,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-all",
            "--",
            "true",
        ],
        capture_output=True,
        check=False,
        timeout=30,
    )
    if probe.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {probe.stderr.decode().strip()}"
    return None


BWRAP_PROBLEM = _bwrap_works()

SANDBOX_WRITABLE = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]


def _outside_sandbox_dir(workspace: Path) -> Path:
    """A directory we may write to that the sandbox must keep read-only: not the workspace
    and not a temp directory (the repository itself may live under /tmp in CI)."""
    writable = [p.resolve() for p in (*SANDBOX_WRITABLE, workspace)]
    for candidate in (Path.home(), Path("/run"), Path("/var/cache"), Path.cwd()):
        real = candidate.resolve()
        if any(real == w or w in real.parents for w in writable):
            continue
        if os.access(real, os.W_OK):
            return real
    raise AssertionError("no writable directory outside the workspace and temp dirs")


needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")


async def test_missing_bubblewrap_is_a_diagnostic_and_bash_refuses(
    make_runtime: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    bash = shutil.which("bash")
    assert bash is not None
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": "bwrap", "shell": bash, "bwrap": str(empty / "bwrap")}},
        approve_asks=True,
    )
    [diagnostic] = [d for d in rt.diagnostics if d.source == "[shell] sandbox"]
    assert diagnostic.level == "error"
    assert "bubblewrap is not installed" in diagnostic.message
    assert "refuse" in diagnostic.message
    marker = tmp_path / "ran"
    result = await rt.call("Bash", {"command": f"touch {marker}"})
    assert result.is_error
    assert "cannot run commands" in result.text and "sandbox" in result.text
    assert not marker.exists()
    background = await rt.call("Bash", {"command": f"touch {marker}", "run_in_background": True})
    assert background.is_error and not marker.exists()


async def test_broken_bubblewrap_is_refused_too(
    make_runtime: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": "bwrap", "bwrap": str(fake / "bwrap")}}, approve_asks=True
    )
    [diagnostic] = [d for d in rt.diagnostics if d.source == "[shell] sandbox"]
    assert "cannot create a sandbox" in diagnostic.message
    assert "No permissions" in diagnostic.message
    result = await rt.call("Bash", {"command": "echo hi"})
    assert result.is_error and "cannot run commands" in result.text


async def test_sandbox_none_means_no_probe_even_with_a_broken_bwrap(
    make_runtime: Any, tmp_path: Path
) -> None:
    # The default is "auto" now (probed, see test_sandbox_default.py); "none" never probes.
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": "none", "bwrap": str(tmp_path / "missing-bwrap")}},
        approve_asks=True,
    )
    assert not [d for d in rt.diagnostics if d.source == "[shell] sandbox"]
    result = await rt.call("Bash", {"command": "echo $$"})
    assert int(result.text) > 2  # the host's PID namespace (sandboxed, the shell is PID 2)


@needs_bwrap
@pytest.mark.local_env  # writes to a folder of this machine outside the workspace
async def test_sandbox_writes_only_workspace_and_temp(make_runtime: Any, workspace: Path) -> None:
    outside = _outside_sandbox_dir(workspace)
    probe = outside / f"sandbox-probe-{new_marker()}"
    rt: Runtime = await make_runtime(config={"shell": {"sandbox": "bwrap"}}, approve_asks=True)
    assert not rt.diagnostics
    inside = await rt.call("Bash", {"command": "echo ok > inside.txt && cat inside.txt"})
    assert inside.text == "ok\n" and (workspace / "inside.txt").read_text() == "ok\n"
    try:
        blocked = await rt.call("Bash", {"command": f"echo bad > {probe}"})
        assert blocked.is_error and "Read-only file system" in blocked.text
        assert not probe.exists()
    finally:
        probe.unlink(missing_ok=True)
    temp = await rt.call("Bash", {"command": "mktemp && echo temp-ok"})
    assert temp.text.endswith("temp-ok\n")
    description = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "sandbox" in description


@needs_bwrap
async def test_sandbox_without_network(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": "bwrap", "network": False}}, approve_asks=True
    )
    result = await rt.call("Bash", {"command": "cat /proc/net/dev"})
    interfaces = [line.split(":")[0].strip() for line in result.text.splitlines()[2:]]
    assert interfaces == ["lo"]


@needs_bwrap
async def test_sandboxed_tasks_are_stopped_whole(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(config={"shell": {"sandbox": "bwrap"}}, approve_asks=True)
    marker = new_marker()
    started = await rt.call(
        "Bash",
        {
            "command": f"({marked_sleep(marker)} &); {marked_sleep(marker)}",
            "run_in_background": True,
        },
    )
    task_id = task_id_in(started.text)
    stopped = await rt.call("TaskStop", {"task_id": task_id})
    assert "status: killed" in stopped.text
    assert not processes_with(marker)


@needs_bwrap
async def test_the_strict_sandbox_masks_secrets_and_ends_setsid_children(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / ".env").write_text("KEY=supersecret\n")
    marker = new_marker()
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": "bwrap"}}, mode="yolo", approve_asks=True
    )
    read = await rt.call("Bash", {"command": "cat .en''v; grep -r KEY ."})
    assert "supersecret" not in read.text
    started = await rt.call(
        "Bash", {"command": f"setsid -f bash -c 'exec -a {marker} sleep 1000'; echo started"}
    )
    assert started.text.startswith("started")
    assert await eventually(lambda: not processes_with(marker), 5)


@needs_bwrap
@pytest.mark.local_env  # writes to a folder of this machine outside the workspace
async def test_the_strict_sandbox_may_allow_writes_anywhere(
    make_runtime: Any, workspace: Path
) -> None:
    outside = _outside_sandbox_dir(workspace) / f"sandbox-probe-{new_marker()}"
    rt: Runtime = await make_runtime(
        config={"shell": {"sandbox": {"mode": "bwrap", "write": "anywhere"}}}, approve_asks=True
    )
    try:
        wrote = await rt.call("Bash", {"command": f"echo out > {outside} && cat {outside}"})
        assert wrote.text == "out\n"
    finally:
        outside.unlink(missing_ok=True)
