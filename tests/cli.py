"""Running the real `deftly` binary the way a script or CI would: no terminal (so nobody
can be asked), wide output without colour, the test's own HOME-like directories."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def run_deftly(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    timeout: float = 120,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """`deftly ARGS...`, its output captured as text; `env` adds environment variables."""
    return subprocess.run(
        [DEFTLY, *args],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200", NO_COLOR="1", **env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
