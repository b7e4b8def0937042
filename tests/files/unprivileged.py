"""Run a file-tool call without root's power to ignore file permissions.

Tests of permission errors cannot fail as root (root reads and writes anything), and CI
runs as root. So the call runs in a child process that loads everything as root, then
drops to the `nobody` user (uid 65534) just before the call, like a real non-root user.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.conftest import subprocess_env

_SCRIPT = """
import asyncio, json, os, sys
from deftly import Runtime

async def main() -> None:
    workspace, warmup, call = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    async with Runtime(workspace, config={}, plugins=False, approve_asks=True) as rt:
        for name, args in warmup:  # load whatever the tool imports lazily, as root
            await rt.call(name, args)
        if os.geteuid() == 0:  # as anyone else, permissions bite already
            os.setgid(65534)
            os.setuid(65534)
        result = await rt.call(call[0], call[1])
        print(json.dumps({"is_error": result.is_error, "text": result.text}))

asyncio.run(main())
"""


def open_workspace() -> Path:
    """A workspace the `nobody` user can reach (pytest's own tmp dirs are root-only)."""
    root = Path(tempfile.mkdtemp(prefix="deftly-unprivileged-"))
    root.chmod(0o777)
    return root


def call_unprivileged(
    workspace: Path,
    name: str,
    args: dict[str, Any],
    warmup: Sequence[tuple[str, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """Run one call as `nobody` (after `warmup` calls as root); {"is_error", "text"}."""
    home = Path(tempfile.mkdtemp(prefix="deftly-nobody-home-"))
    home.chmod(0o777)
    argv = [sys.executable, "-c", _SCRIPT, str(workspace)]
    argv += [json.dumps(list(warmup)), json.dumps([name, args])]
    result = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=subprocess_env(DEFTLY_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config")),
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return data
