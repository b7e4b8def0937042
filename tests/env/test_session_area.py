"""The runtime puts spill files and task logs where the env shows the session directory
(`ExecEnv.session_area`), and the model can page a spill file with Read there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from deftly import Runtime
from tests.env.test_local_env import AreaEnv
from tests.helpers import BigTool


async def test_the_runtime_spills_into_the_env_session_area(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = AreaEnv(tmp_path / "area")
    runtime = Runtime(
        workspace,
        env=env,
        home=tmp_path / "home",
        tools=[BigTool()],
        config={"output": {"max_chars": 1000}, "shell": {"sandbox": "none"}},
        plugins=False,
        approve_asks=True,
    )
    await runtime.start()
    try:
        result = await runtime.call("Big", {"chars": 5000})
        path = Path(result.text.split("output_path: ")[1].split("\n")[0])
        assert path.is_relative_to(tmp_path / "area") and path in env.written
        paged = await runtime.call("Read", {"path": os.fspath(path), "n_lines": 2})
        assert not paged.is_error and "line 0000000" in paged.text
        tasks: Any = await runtime.call(
            "Bash", {"command": "echo logged", "run_in_background": True}
        )
        assert not tasks.is_error
        # the log is complete once the task has ended (closing would stop it sooner)
        waited = await runtime.call("WaitFor", {"timeout": 60})
        assert not waited.is_error and "completed" in waited.text, waited.text
    finally:
        await runtime.close()
    logs = list((tmp_path / "area").glob("*/tasks/*.log"))
    assert [log.read_text() for log in logs] == ["logged\n"]
