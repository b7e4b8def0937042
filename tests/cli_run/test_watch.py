"""`deftly run --watch`: the prompt, then the agent's inbox, with no terminal; SIGTERM
ends it with 0, SIGINT with 130, and a running tool's processes do not outlive it."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.cli import DEFTLY
from tests.cli_run.helpers import user_texts
from tests.cli_run.pty import processes_with
from tests.cli_run.test_interactive_inbox import FileClock, clock
from tests.conftest import subprocess_env
from tests.mcp.conftest import wait_until
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env

__all__ = ["clock"]  # the fixture, used by name

TIMEOUT = 30.0


class Watcher:
    """A `deftly run --watch` process; its stdout read line by line as it comes."""

    def __init__(self, args: list[str], stderr: Path, **env: str) -> None:
        self.stderr_path = stderr
        self._stderr: IO[str] = stderr.open("w")
        self.process = subprocess.Popen(
            [DEFTLY, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=subprocess_env(COLUMNS="200", NO_COLOR="1", OPENAI_API_KEY="k", **env),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, wanted: Callable[[str], bool]) -> str:
        """The next stdout line that `wanted` accepts (fails at EOF or after the timeout)."""
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line is not None, f"stdout ended; it had: {self.seen}; stderr: {self.stderr}"
            self.seen.append(line)
            if wanted(line):
                return line

    def expect_event(self, event_type: str) -> dict[str, Any]:
        """The next `--json` event of this type."""
        line = self.expect(lambda text: json.loads(text).get("type") == event_type)
        event: dict[str, Any] = json.loads(line)
        return event

    def stop(self, signum: signal.Signals) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=TIMEOUT)

    @property
    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT)
        self._stderr.close()


@pytest.fixture
def watchers(tmp_path: Path) -> Iterator[Callable[..., Watcher]]:
    """Start watchers; any still running at the end are killed."""
    started: list[Watcher] = []

    def start(server: ModelServer, workspace: Path, *args: str, **env: str) -> Watcher:
        watcher = Watcher(
            [
                "run",
                "--watch",
                *args,
                "-w",
                str(workspace),
                "--base-url",
                server.openai_url,
                "--model",
                "scripted",
            ],
            tmp_path / f"stderr-{len(started)}.txt",
            **env,
        )
        started.append(watcher)
        return watcher

    yield start
    for watcher in started:
        watcher.close()


def test_the_prompt_runs_then_the_watch_waits_until_sigterm_ends_it_with_0(
    workspace: Path, watchers: Callable[..., Watcher]
) -> None:
    with ModelServer([say("first answer")]) as server:
        watcher = watchers(server, workspace, "--json", "say something")
        start = watcher.expect_event("turn_start")
        assert start["prompt"] == "say something" and "origin" not in start
        end = watcher.expect_event("turn_end")
        assert (end["stop_reason"], end["text"]) == ("end_turn", "first answer")
        assert watcher.process.poll() is None  # still watching
        assert watcher.stop(signal.SIGTERM) == 0
    assert [user_texts(r)[-1] for r in server.requests] == ["say something"]


def test_without_a_prompt_nothing_runs_and_stdin_is_not_read(
    workspace: Path, watchers: Callable[..., Watcher]
) -> None:
    with ModelServer([]) as server:
        watcher = watchers(server, workspace)
        assert wait_until(lambda: "deftly: watching session" in watcher.stderr)
        assert watcher.process.poll() is None
        assert watcher.stop(signal.SIGTERM) == 0
    assert server.requests == []


def test_sigint_cancels_a_running_tool_and_exits_130_leaving_no_process(
    workspace: Path, watchers: Callable[..., Watcher]
) -> None:
    marker = f"watch-{uuid.uuid4().hex[:8]}"
    script = [calls(Call("Bash", {"command": f"sleep 300 # {marker}"})), say("never")]
    with ModelServer(script) as server:
        watcher = watchers(server, workspace, "--json", "--yes", "sleep a while")
        watcher.expect_event("tool_call")
        assert wait_until(lambda: bool(processes_with(marker)))
        assert watcher.stop(signal.SIGINT) == 130
        assert wait_until(lambda: not processes_with(marker))
    assert len(server.requests) == 1  # the turn was cancelled, not continued


CREATE = Call("CronCreate", {"cron": "* * * * *", "prompt": "check the build"})


def test_a_cron_job_made_in_the_prompt_fires_as_a_json_turn_with_its_origin(
    workspace: Path, watchers: Callable[..., Watcher], clock: FileClock
) -> None:
    script = [calls(CREATE), say("Scheduled."), say("Build is green.")]
    with ModelServer(script) as server:
        watcher = watchers(server, workspace, "--json", "--yes", "check the build each minute")
        assert watcher.expect_event("turn_end")["text"] == "Scheduled."
        clock.advance(60)
        start = watcher.expect_event("turn_start")
        assert start["origin"]["kind"] == "cron_job"
        assert start["origin"]["cron"] == "* * * * *"
        assert start["prompt"].startswith("<cron-fire") and "check the build" in start["prompt"]
        assert watcher.expect_event("turn_end")["text"] == "Build is green."
        assert watcher.stop(signal.SIGTERM) == 0
    assert user_texts(server.requests[2])[-1] == start["prompt"]
    assert "⏰" not in watcher.stderr  # with --json the origin is on the event


def test_in_print_mode_a_fired_turn_is_announced_on_stderr_and_answers_on_stdout(
    workspace: Path, watchers: Callable[..., Watcher], clock: FileClock
) -> None:
    script = [calls(CREATE), say("Scheduled."), say("Build is green.")]
    with ModelServer(script) as server:
        watcher = watchers(server, workspace, "--yes", "check the build each minute")
        watcher.expect(lambda line: line == "Scheduled.")
        clock.advance(60)
        watcher.expect(lambda line: line == "Build is green.")
        assert watcher.stop(signal.SIGINT) == 130
    assert "⏰ Cron job" in watcher.stderr and "fired (* * * * *)" in watcher.stderr
    assert user_texts(server.requests[2])[-1].startswith("<cron-fire")
