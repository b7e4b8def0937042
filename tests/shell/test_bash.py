"""Bash in the foreground: real shells, real processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.execution import ToolProgress
from deftly.features.shell.launch import NON_INTERACTIVE
from tests.shell.conftest import env_of, read_named, tasks_of


async def test_output_success_and_merged_streams_in_order(shell: Any, workspace: Path) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "echo one; echo two >&2; echo three; pwd"})
    assert not result.is_error
    assert result.text == f"one\ntwo\nthree\n{workspace}\n"


async def test_empty_output_says_so(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "true"})
    assert not result.is_error
    assert "no output" in result.text and "exit code 0" in result.text


async def test_non_zero_exit_is_an_error_with_the_output(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "echo partial; echo boom >&2; exit 3"})
    assert result.is_error
    assert result.text.startswith("partial\nboom\n")
    assert "exit code 3" in result.text


async def test_command_not_found_explains_127(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "no-such-command-deftly-xyz"})
    assert result.is_error
    assert "exit code 127" in result.text and "not found" in result.text


async def test_a_signal_is_named(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "kill -SEGV $$"})
    assert result.is_error
    assert "SIGSEGV" in result.text


async def test_cat_with_no_input_returns_at_once(shell: Any) -> None:
    rt: Runtime = await shell(timeout=60)
    start = time.monotonic()
    result = await rt.call("Bash", {"command": "cat; echo after-cat"})
    assert time.monotonic() - start < 20
    assert not result.is_error and result.text == "after-cat\n"


async def test_read_returns_instead_of_waiting(shell: Any) -> None:
    rt: Runtime = await shell(timeout=60)
    start = time.monotonic()
    result = await rt.call("Bash", {"command": "read x; echo read-exit=$?"})
    assert time.monotonic() - start < 20
    assert result.text == "read-exit=1\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_terminal_pager_and_editor_do_not_hang(shell: Any, workspace: Path) -> None:
    rt: Runtime = await shell(timeout=60)
    subprocess.run(["git", "init", "-q", os.fspath(workspace)], check=True)
    (workspace / "f.txt").write_text("x\n")
    start = time.monotonic()
    tty = await rt.call("Bash", {"command": "cat /dev/tty"})
    assert tty.is_error  # no controlling terminal: fails instead of waiting
    commit = await rt.call(
        "Bash",
        {
            "command": "git add f.txt && git -c user.name=t -c user.email=t@t commit -q; "
            "echo commit=$?; git log --oneline | cat; echo log=$?"
        },
    )
    assert "commit=" in commit.text  # the editor (GIT_EDITOR=true) returned at once
    assert time.monotonic() - start < 30


async def test_non_interactive_environment(shell: Any) -> None:
    rt: Runtime = await shell(env={"PAGER": "less", "DEFTLY_TEST_VAR": "hello"})
    names = [*NON_INTERACTIVE, "DEFTLY_TEST_VAR", "SHELL"]
    script = "; ".join(f'echo "{n}=${{{n}}}"' for n in names)
    result = await rt.call("Bash", {"command": script})
    values = dict(line.split("=", 1) for line in result.text.splitlines())
    assert values["NO_COLOR"] == "1"
    assert values["TERM"] == "dumb"
    assert values["GIT_TERMINAL_PROMPT"] == "0"
    assert values["GIT_EDITOR"] == "true"
    assert values["PAGER"] == "less"  # the user's [shell] env wins over the defaults
    assert values["DEFTLY_TEST_VAR"] == "hello"
    assert values["SHELL"].endswith("bash")


@pytest.mark.local_env  # the local layout; a rooted env's bubblewrap leads the session
async def test_own_session_and_process_group(shell: Any) -> None:
    # About the unsandboxed layout (the shell leads its session); in the sandbox the shell
    # has a PID namespace of its own instead (tests/shell/test_sandbox_default.py).
    rt: Runtime = await shell(sandbox="none")
    result = await rt.call("Bash", {"command": "echo $$; cat /proc/$$/stat"})
    pid_line, stat = result.text.split("\n", 1)
    fields = stat[stat.rfind(")") + 2 :].split()
    pid, pgid, sid = int(pid_line), int(fields[2]), int(fields[3])
    assert pid == pgid == sid
    assert sid != os.getsid(0)


async def test_progress_is_streamed(shell: Any) -> None:
    rt: Runtime = await shell()
    seen: list[str] = []
    rt.subscribe(
        lambda event: (
            seen.append(event.update.text or "")
            if isinstance(event, ToolProgress) and event.update.kind == "stdout"
            else None
        )
    )
    result = await rt.call("Bash", {"command": "echo first; sleep 0.3; echo second"})
    assert not result.is_error
    assert "".join(seen) == "first\nsecond\n"


async def test_long_output_keeps_both_ends_and_the_log(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "seq 1 200000"})
    assert not result.is_error and result.result.truncated
    text = result.text
    assert len(text) <= rt.config.output.max_chars
    assert text.startswith("1\n2\n3\n")
    assert "200000" in text.splitlines()[-1]
    log_line = next(line for line in text.splitlines() if line.startswith("log_path: "))
    log = Path(log_line.removeprefix("log_path: "))
    assert read_named(rt, log).decode() == "".join(f"{i}\n" for i in range(1, 200001))
    assert rt.workspace.contains(log)  # the file tools may read it


async def test_short_output_leaves_no_log_file(shell: Any) -> None:
    rt: Runtime = await shell()
    await rt.call("Bash", {"command": "echo small"})
    log_dir = tasks_of(rt).log_dir
    env = env_of(rt)
    assert not env.exists(log_dir) or not any(env.scandir(log_dir))


async def test_one_huge_line_is_cut_and_kept_whole_in_the_log(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "head -c 100000 /dev/zero | tr '\\0' x; echo"})
    assert result.result.truncated and "[...truncated]" in result.text
    log_line = next(line for line in result.text.splitlines() if line.startswith("log_path: "))
    assert env_of(rt).stat(Path(log_line.removeprefix("log_path: "))).st_size == 100_001


async def test_output_limit_stops_the_command(shell: Any) -> None:
    rt: Runtime = await shell(output_limit_bytes=1_000_000)
    start = time.monotonic()
    result = await rt.call("Bash", {"command": "yes deftly-output-limit"})
    assert time.monotonic() - start < 30
    assert result.is_error
    assert "output limit exceeded" in result.text and "976.6 KiB" in result.text
    assert "> out.log" in result.text


async def test_invalid_utf8_does_not_break_anything(shell: Any) -> None:
    rt: Runtime = await shell()
    result = await rt.call("Bash", {"command": "printf 'a\\377b\\n'"})
    assert not result.is_error and result.text == "a\ufffdb\n"


async def test_empty_and_blank_commands_are_refused(shell: Any) -> None:
    rt: Runtime = await shell()
    empty = await rt.call("Bash", {"command": ""})
    assert empty.is_error and "command" in empty.text
    blank = await rt.call("Bash", {"command": "   \n"})
    assert blank.is_error and "empty" in blank.text
    nul = await rt.call("Bash", {"command": "echo a\x00b"})
    assert nul.is_error and "NUL" in nul.text


async def test_timeout_out_of_range(shell: Any) -> None:
    rt: Runtime = await shell(max_timeout=100, max_background_timeout=1000, timeout=10)
    fg = await rt.call("Bash", {"command": "echo x", "timeout": 101})
    assert fg.is_error and "at most 100 seconds" in fg.text and "run_in_background" in fg.text
    bg = await rt.call("Bash", {"command": "echo x", "timeout": 1001, "run_in_background": True})
    assert bg.is_error and "at most 1000 seconds" in bg.text
    zero = await rt.call("Bash", {"command": "echo x", "timeout": 0})
    assert zero.is_error and "timeout" in zero.text


async def test_a_command_that_cannot_start(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(
        config={"shell": {"shell": "/nonexistent/deftly-shell"}}, approve_asks=True
    )
    result = await rt.call("Bash", {"command": "echo hi"})
    assert result.is_error
    assert "could not be started" in result.text and "/nonexistent/deftly-shell" in result.text


async def test_configured_shell_is_used(make_runtime: Any) -> None:
    rt: Runtime = await make_runtime(config={"shell": {"shell": "sh"}}, approve_asks=True)
    result = await rt.call("Bash", {"command": 'echo "$SHELL"'})
    assert result.text.strip().endswith("/sh")
    assert "(sh -c)" in rt.registry.get("Bash").tool.description  # type: ignore[union-attr]


async def test_description_states_the_configured_limits(shell: Any) -> None:
    rt: Runtime = await shell(timeout=42, max_timeout=99, on_timeout="kill")
    text = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "42 s" in text and "99 s" in text and "killed" in text
    assert "${" not in text


async def test_resolve_declares_no_accesses_and_shows_the_command(shell: Any) -> None:
    rt: Runtime = await shell()
    tool = rt.registry.get("Bash").tool  # type: ignore[union-attr]
    execution = tool.resolve(tool.parse_args({"command": "ls -la", "description": "list"}))
    assert execution.accesses is None  # runs alone
    assert execution.display.command == "ls -la"
    assert execution.display.description == "list"
    assert execution.approval_rule == "Bash(ls -la)"


async def test_password_prompt_and_pager_return(shell: Any, workspace: Path) -> None:
    rt: Runtime = await shell(timeout=60)
    (workspace / "page.txt").write_text("paged text\n")
    start = time.monotonic()
    password = await rt.call(
        "Bash", {"command": f"{sys.executable} -c 'import getpass; getpass.getpass()'"}
    )
    assert password.is_error  # no terminal, no input: the prompt fails instead of waiting
    if shutil.which("less"):
        pager = await rt.call("Bash", {"command": "less page.txt"})
        # Issue 11: a pager is refused at once with what to use instead (Read).
        assert pager.is_error and "less is a pager" in pager.text and "Read" in pager.text
    assert time.monotonic() - start < 30


async def test_background_tasks_from_python(tmp_path: Path) -> None:
    from deftly.config.shell import ShellConfig
    from deftly.env import LocalEnv
    from deftly.features.shell import BackgroundTasks, TaskStatus

    tasks = BackgroundTasks(LocalEnv(), ShellConfig(kill_grace=1), tmp_path / "logs")
    try:
        task = await tasks.start("echo from-python; exit 5", background=True, cwd=tmp_path)
        assert await task.wait(20)
        assert task.status is TaskStatus.FAILED and task.exit_code == 5
        assert task.log.path.read_text() == "from-python\n"
        [notice] = tasks.take_notices()
        assert notice.task_id == task.id and "exit code 5" in notice.message
        sleeper = await tasks.start("sleep 30", background=True, cwd=tmp_path)
        await tasks.stop(sleeper)
        assert sleeper.status is TaskStatus.KILLED
    finally:
        await tasks.close()
