"""The file, shell and search tests, once more through the rooted env (issue 12).

The README's one test command runs this too: a second pytest, in a subprocess, with
`--env=rooted`, over `tests/files` and `tests/shell`. Tests marked `local_env` test the
local env itself (the command line, LocalEnv's process layout, host-side write probes) and
run only in the normal pass.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import repo_root, subprocess_env


@pytest.mark.local_env  # it starts the rooted run; inside that run it would start itself
def test_the_file_shell_and_search_tests_pass_through_the_rooted_env() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--env=rooted",
            "tests/files",
            "tests/shell",
        ],
        cwd=repo_root(),
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed is not None and int(passed.group(1)) >= 450, tail
    assert "failed" not in done.stdout.splitlines()[-1], tail
