"""The local env speaks the neutral types, an env without a process tree still runs
commands (and says what it cannot do), and spill files land where the env shows them."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.config.shell import ShellConfig
from deftly.contract.fs import DirEntryInfo, EntryKind, FileStat
from deftly.contract.result import ToolResult
from deftly.env import FS, PROCESS, PROCESS_TREE, LocalEnv, ProcessTree
from deftly.execution.spill import OutputBudget, Spiller
from deftly.features.shell import BackgroundTasks, TaskStatus
from deftly.features.shell.tasks import TaskError


class BareEnv(LocalEnv):
    """This machine without the process-tree capability (as a remote env may be)."""

    capabilities = frozenset({FS, PROCESS})

    @property
    def process_tree(self) -> ProcessTree | None:
        """None: no process tree here."""
        return None


class AreaEnv(LocalEnv):
    """This machine, showing each directory `session_area` is asked about at another
    path (a link under `area`, as a rooted env mounts it elsewhere), recording every file
    it writes."""

    def __init__(self, area: Path) -> None:
        super().__init__()
        self.area = area
        self.written: list[Path] = []

    def session_area(self, local_dir: Path) -> Path:
        """`local_dir` as seen here: `area/<its name>`, the same directory."""
        shown = self.area / local_dir.name
        if not shown.is_symlink():
            local_dir.mkdir(parents=True, exist_ok=True)
            self.area.mkdir(parents=True, exist_ok=True)
            shown.symlink_to(local_dir, target_is_directory=True)
        return shown

    def write_atomic(
        self, path: Path, data: bytes, *, mode: int | None = None, pinned: bool = False
    ) -> None:
        """Record, then write for real."""
        self.written.append(path)
        super().write_atomic(path, data, mode=mode, pinned=pinned)


def test_local_files_come_back_as_neutral_types(tmp_path: Path) -> None:
    env = LocalEnv()
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_bytes(b"12345")
    os.symlink("file", tmp_path / "link")
    st = env.stat(tmp_path / "file")
    raw = os.stat(tmp_path / "file")
    assert isinstance(st, FileStat)
    assert (st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode) == (
        5,
        raw.st_mtime_ns,
        raw.st_ino,
        raw.st_mode,
    )
    assert st.st_mtime == pytest.approx(raw.st_mtime) and st.is_file() and not st.is_dir()
    assert env.stat(tmp_path / "link").is_file() and env.lstat(tmp_path / "link").is_symlink()
    entries = {entry.name: entry for entry in env.scandir(tmp_path)}
    assert all(isinstance(entry, DirEntryInfo) for entry in entries.values())
    assert {name: entry.kind for name, entry in entries.items()} == {
        "dir": EntryKind.DIR,
        "file": EntryKind.FILE,
        "link": EntryKind.SYMLINK,
    }
    assert entries["file"].path == os.fspath(tmp_path / "file")
    with env.open_read(tmp_path / "file") as handle:
        assert env.stat_handle(handle) == st
    assert env.capabilities >= {FS, PROCESS, PROCESS_TREE}
    assert isinstance(env.process_tree, ProcessTree)
    assert env.session_area(tmp_path) == tmp_path


async def test_a_spawned_process_is_used_through_the_protocol(tmp_path: Path) -> None:
    env = LocalEnv()
    process = await env.spawn(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path)
    assert process.stdout is not None and process.pid > 0
    output = await process.stdout.read()
    assert await process.wait() == 3 and process.returncode == 3
    assert sorted(output.split()) == [b"err", b"out"]  # stderr merged by default


async def test_commands_run_without_a_process_tree_and_stop_by_their_one_process(
    tmp_path: Path,
) -> None:
    tasks = BackgroundTasks(BareEnv(), ShellConfig(kill_grace=1, sandbox="none"), tmp_path / "l")
    try:
        done = await tasks.start("echo from-bare; exit 4", background=True, cwd=tmp_path)
        assert await done.wait(20)
        assert done.status is TaskStatus.FAILED and done.exit_code == 4
        assert done.log.path.read_text() == "from-bare\n"
        sleeper = await tasks.start("exec sleep 30", background=True, cwd=tmp_path)
        with pytest.raises(TaskError) as refused:
            tasks.detach(sleeper)
        assert "process tree" in str(refused.value) and "TaskStop" in str(refused.value)
        await asyncio.wait_for(tasks.stop(sleeper), 20)
        assert sleeper.status is TaskStatus.KILLED
        assert sleeper.process.returncode == -signal.SIGTERM
    finally:
        await tasks.close()


async def test_bash_runs_in_a_runtime_whose_env_has_no_process_tree(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime = Runtime(
        workspace,
        env=BareEnv(),
        home=tmp_path / "home",
        config={"shell": {"sandbox": "none"}},
        plugins=False,
        approve_asks=True,
    )
    await runtime.start()
    try:
        result = await runtime.call("Bash", {"command": "echo bare-$((6*7))"})
        assert not result.is_error and "bare-42" in result.text
    finally:
        await runtime.close()


def test_the_spiller_writes_through_the_env_it_is_given(tmp_path: Path) -> None:
    env = AreaEnv(tmp_path / "area")
    spill_dir = env.session_area(tmp_path / "session") / "spill"
    spiller = Spiller(spill_dir, OutputBudget(max_chars=100), env)
    result = spiller.apply("Tool", "call-1", ToolResult.ok("é" * 500))
    path = Path(result.text.split("output_path: ")[1].split("\n")[0])
    assert env.written == [path] and path.parent == spill_dir
    assert env.read_bytes(path).decode("utf-8") == "é" * 500
    assert spill_dir.stat().st_mode & 0o777 == 0o700


async def test_without_a_process_tree_a_command_ends_when_its_shell_exits(
    tmp_path: Path,
) -> None:
    # The background child holds the output pipe for 4 s; the command's end is seen at
    # its shell's exit all the same (the child is the environment's to stop).
    tasks = BackgroundTasks(BareEnv(), ShellConfig(kill_grace=1, sandbox="none"), tmp_path / "l")
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        task = await tasks.start("sleep 4 & echo started", cwd=tmp_path)
        assert await task.wait(3.5)
        assert loop.time() - started < 3.5
        assert task.status is TaskStatus.COMPLETED and task.log.tail_text() == "started\n"
    finally:
        await tasks.close()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_pinned_read_that_cannot_be_a_file_leaves_no_descriptor_open(tmp_path: Path) -> None:
    env = LocalEnv()
    (tmp_path / "notes.txt").write_bytes(b"kept\n")
    before = _open_fds()
    with pytest.raises(IsADirectoryError):
        env.open_read(tmp_path.resolve(), pinned=True)  # opens, then is no regular file
    assert _open_fds() == before
    with env.open_read((tmp_path / "notes.txt").resolve(), pinned=True) as handle:
        assert handle.read() == b"kept\n"
    assert _open_fds() == before
