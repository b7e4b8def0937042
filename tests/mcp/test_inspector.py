"""`deftly serve` checked by an independent client: the official MCP Inspector CLI.

The Inspector is pinned by tests/mcp/inspector/package.json and package-lock.json and
installed once per lock into a cache directory outside the repository (`npm ci`, or
`npm install --no-save` from the same lock when `npm ci` refuses it: the Inspector's vite
dependency names an optional Windows-only package the registry does not serve, which
`npm ci` counts as missing from the lock). Without Node.js the test is skipped with a
message; nothing is downloaded at test time except through npm's own registry client.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import repo_root, subprocess_env
from tests.mcp.conftest import DEFTLY

PINNED = Path(__file__).with_name("inspector")
NPM_FLAGS = ["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(
        (PINNED / "package.json").read_bytes() + (PINNED / "package-lock.json").read_bytes()
    ).hexdigest()[:16]
    return Path(base) / "deftly-tests" / f"mcp-inspector-{digest}"


def install(target: Path, npm: str) -> Path:
    binary = target / "node_modules" / ".bin" / "inspector"
    stamp = target / ".installed"
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other test runs may install at the same time
        if stamp.exists() and binary.exists():
            return binary
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PINNED / name, target / name)
        attempts = [[npm, "ci", *NPM_FLAGS], [npm, "install", "--no-save", *NPM_FLAGS]]
        problems = []
        for command in attempts:
            done = subprocess.run(
                command, cwd=target, capture_output=True, text=True, timeout=600, check=False
            )
            if done.returncode == 0 and binary.exists():
                stamp.write_text(" ".join(command))
                return binary
            problems.append(f"{' '.join(command[:2])}: {done.stderr.strip()[-500:]}")
        pytest.skip("could not install the MCP Inspector with npm:\n" + "\n".join(problems))


@pytest.fixture(scope="session")
def inspector() -> Iterator[Path]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(
            "Node.js (node and npm) is not installed, so the MCP Inspector check is skipped"
        )
    yield install(cache_dir(), npm)


def run_inspector(
    inspector: Path, workspace: Path, *method: str
) -> subprocess.CompletedProcess[str]:
    env = subprocess_env()
    env["MCP_CATALOG_PATH"] = str(inspector.parents[2] / "catalog.json")
    passed = [
        arg
        for key in ("PYTHONPATH", "DEFTLY_HOME", "XDG_CONFIG_HOME")
        for arg in ("-e", f"{key}={env[key]}")
    ]
    return subprocess.run(
        [
            str(inspector),
            "--cli",
            *passed,
            DEFTLY,
            "serve",
            "-w",
            str(workspace),
            "--mode",
            "auto",
            *method,
        ],
        env=env,
        cwd=repo_root(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_inspector_lists_and_calls_deftly_tools(inspector: Path, serve_workspace: Path) -> None:
    listed = run_inspector(inspector, serve_workspace, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"]}
    assert {"Echo", "Sleep", "Tick"} <= set(tools)
    assert tools["Echo"]["annotations"]["readOnlyHint"] is True

    called = run_inspector(
        inspector,
        serve_workspace,
        *("--method", "tools/call", "--tool-name", "Echo", "--tool-arg", "text=hello", "times=2"),
    )
    assert called.returncode == 0, called.stdout + called.stderr
    result = json.loads(called.stdout)
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "hellohello"}]

    failed = run_inspector(
        inspector,
        serve_workspace,
        *("--method", "tools/call", "--tool-name", "Broken", "--tool-arg", "how=raise"),
    )
    assert failed.returncode == 5, failed.stdout + failed.stderr  # the Inspector's isError code
