"""A cron job firing into an idle interactive `deftly run` (a real pty, pexpect), on a clock
the test moves (`DEFTLY_CRON_CLOCK=file:`), and the job kept across `--resume`."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pexpect
import pytest

from tests.agent.loop.helpers import content_text, tool_messages
from tests.cli_run.helpers import user_config, user_texts
from tests.cli_run.pty import PROMPT, spawn
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer

pytestmark = pytest.mark.local_env


START = 1_767_225_630  # half a minute past a minute, so one more minute passes one match
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-z]+")


class FileClock:
    """The cron clock a `deftly` process reads, moved by the test."""

    def __init__(self, path: Path, now: float) -> None:
        self.path = path
        self.now = now
        self._write()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self._write()

    def _write(self) -> None:
        partial = self.path.with_suffix(".tmp")
        partial.write_text(f"{self.now}\n")
        os.replace(partial, self.path)


@pytest.fixture
def clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FileClock:
    path = tmp_path / "cron-clock"
    moved = FileClock(path, START)
    monkeypatch.setenv("DEFTLY_CRON_CLOCK", f"file:{path}")
    user_config("[cron]\npoll_interval = 0.05\nno_jitter = true\n")
    return moved


def test_a_cron_job_fires_into_the_idle_session_and_again_after_a_resume(
    workspace: Path, sessions: list[pexpect.spawn], clock: FileClock
) -> None:
    script = [
        calls(Call("CronCreate", {"cron": "* * * * *", "prompt": "check the build"})),
        say("Scheduled it."),
        say("Build looks green."),  # the fired turn
        say("Got the half line."),  # the text kept at the prompt, sent
        calls(Call("CronList", {})),  # after the resume
        say("One job."),
        say("Green again."),  # fired after the resume
    ]
    with ModelServer(script) as server:
        child = spawn(server, workspace, "--yes")
        sessions.append(child)
        found = SESSION_ID.search(child.before)
        assert found is not None, child.before
        session_id = found.group(0)
        child.sendline("check the build every minute")
        child.expect("Scheduled it.")
        child.expect(PROMPT)
        child.send("half a line")
        child.expect("half a line")
        clock.advance(60)
        child.expect(r"Cron job (\S+) fired \(\* \* \* \* \*\)")
        job_id = child.match.group(1)
        child.expect("Build looks green.")
        child.expect(PROMPT)
        child.expect("half a line")  # what was typed is back in the new prompt
        child.sendline("")
        child.expect("Got the half line.")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        fired = user_texts(server.requests[2])[-1]
        assert fired.startswith(f'<cron-fire jobId="{job_id}"') and "check the build" in fired
        assert user_texts(server.requests[3])[-1] == "half a line"

        child = spawn(server, workspace, "--yes", "--resume", session_id)
        sessions.append(child)
        child.sendline("which jobs are there?")
        child.expect("One job.")
        child.expect(PROMPT)
        listed = tool_messages(server.requests[5])[-1]  # CronList, after the earlier CronCreate
        assert job_id in content_text(listed) and "* * * * *" in content_text(listed)
        clock.advance(60)
        child.expect(rf"Cron job {job_id} fired")
        child.expect("Green again.")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    assert user_texts(server.requests[6])[-1].startswith(f'<cron-fire jobId="{job_id}"')
    assert len(server.requests) == 7
